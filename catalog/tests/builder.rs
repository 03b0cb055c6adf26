//! Catalog building (validation, atomic failure, disabling), describe and
//! the binding matrix.

use codemode_catalog::{
    bind, BindError, Capability, Catalog, Data, HandlerError, NameError, NoInput, NotFound,
    Problem, Rule, RuleError,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::BTreeMap;

mod github_manifest;

#[derive(Serialize, JsonSchema)]
struct Done {
    ok: bool,
}

fn cap(name: &str) -> Capability {
    Capability::new(name, |_: NoInput| async { Ok(Done { ok: true }) }).summary("Does a thing.")
}

fn problems(b: codemode_catalog::CatalogBuilder) -> Vec<Problem> {
    b.build().unwrap_err().problems
}

#[test]
fn building_validates_everything_and_fails_atomically() {
    let got = problems(
        Catalog::builder()
            .capability(cap("records.lookup").id("records.entry.lookup"))
            .capability(cap("records.lookup").id("other"))
            .capability(cap("records.other").id("records.entry.lookup"))
            .capability(cap("json.x"))
            .capability(cap("set.x"))
            .capability(cap("nodots"))
            .capability(cap("a.b"))
            .capability(cap("a.b.c"))
            .capability(cap("ok.name").id("bad\tid"))
            .capability(Capability::new("no.summary", |_: NoInput| async {
                Ok(Done { ok: true })
            }))
            .capability(cap("many.terms").search_terms(vec!["x"; 33]))
            .capability(cap("blank.term").search_terms(["  "]))
            .disable("missing.id"),
    );
    assert_eq!(
        got,
        vec![
            Problem::Name(NameError::ReservedRoot("json.x".into())),
            Problem::Name(NameError::ReservedRoot("set.x".into())),
            Problem::Name(NameError::Syntax("nodots".into())),
            Problem::Name(NameError::IdSyntax("bad\tid".into())),
            Problem::Text("no.summary".into(), "summary is empty".into()),
            Problem::Text("many.terms".into(), "more than 32 search terms".into()),
            Problem::Text(
                "blank.term".into(),
                "search terms must be 1-128 bytes and not blank".into()
            ),
            Problem::DuplicateName("records.lookup".into()),
            Problem::DuplicateId("records.entry.lookup".into()),
            Problem::NamespaceClash("a.b".into(), "a.b.c".into()),
            Problem::UnknownDisabled("missing.id".into()),
        ]
    );
}

#[test]
fn a_disabled_capability_is_absent_everywhere() {
    let catalog = Catalog::builder()
        .capability(cap("conformance.echo").summary("Echo a value back."))
        .capability(
            cap("conformance.hidden")
                .id("conf.hidden")
                .summary("Hidden echo value."),
        )
        .disable("conf.hidden")
        .build()
        .unwrap();
    assert_eq!(catalog.describe("conformance.hidden"), Err(NotFound));
    assert_eq!(catalog.describe("conformance.never"), Err(NotFound));
    assert!(catalog.get("conformance.hidden").is_none());
    assert_eq!(catalog.names().collect::<Vec<_>>(), ["conformance.echo"]);
    let r = catalog.search("hidden").unwrap();
    assert!(r.results.is_empty());
    let r = catalog.search("conformance.hidden").unwrap();
    assert!(r.results.is_empty());
    let r = catalog.search("echo value").unwrap();
    assert_eq!(r.results.len(), 1);
}

#[test]
fn describe_is_exact() {
    let catalog = Catalog::builder()
        .capability(cap("records.lookup"))
        .build()
        .unwrap();
    assert!(catalog.describe("records.lookup").is_ok());
    for near in [
        "Records.lookup",
        " records.lookup",
        "records.lookup ",
        "records",
        "records.look",
    ] {
        assert_eq!(catalog.describe(near), Err(NotFound), "{near}");
    }
    assert_eq!(NotFound.to_string(), "capability not found");
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Filter {
    owner: String,
    label: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Input {
    key: String,
    limit: Option<i64>,
    score: Option<f64>,
    tags: Option<Vec<String>>,
    filter: Option<Filter>,
    labels: Option<BTreeMap<String, i64>>,
    active: Option<bool>,
}

fn input_fields() -> Vec<codemode_catalog::FieldShape> {
    let catalog = Catalog::builder()
        .capability(
            Capability::new("records.find", |_: Input| async { Ok(Done { ok: true }) })
                .summary("Find.")
                .rule("limit", Rule::range(1, 100))
                .rule("key", [Rule::MinLength(1), Rule::MaxLength(8)])
                .rule("tags[]", [Rule::one_of_str(["a", "b"])])
                .rule("filter.owner", [Rule::MinLength(2)])
                .rule("labels{}", [Rule::Minimum(0.into())]),
        )
        .build()
        .unwrap();
    catalog.get("records.find").unwrap().input().to_vec()
}

fn s(v: &str) -> Data {
    Data::Str(v.into())
}

fn args(pairs: &[(&str, Data)]) -> Vec<(String, Data)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

#[test]
fn the_binding_matrix() {
    let fields = input_fields();
    let ok = |a: &[(&str, Data)]| bind(&fields, args(a)).map(|d| d.to_json_string());
    let bad = |a: &[(&str, Data)]| match bind(&fields, args(a)) {
        Err(BindError(d)) => d,
        Ok(d) => panic!("bound {}", d.to_json_string()),
    };
    // Canonical map: declaration order; omitted and None both absent.
    assert_eq!(ok(&[("key", s("k"))]), Ok(r#"{"key":"k"}"#.into()));
    assert_eq!(
        ok(&[
            ("limit", Data::Null),
            ("score", Data::Int(2)),
            ("key", s("k"))
        ]),
        Ok(r#"{"key":"k","score":2.0}"#.into())
    );
    assert_eq!(
        ok(&[
            ("filter", Data::Map(vec![("label".into(), Data::Null), ("owner".into(), s("me"))])),
            ("key", s("k")),
            ("tags", Data::List(vec![s("a"), s("b")])),
            ("labels", Data::Map(vec![("x".into(), Data::Int(0))])),
            ("active", Data::Bool(false)),
            ("limit", Data::Int(100)),
        ]),
        Ok(r#"{"key":"k","limit":100,"tags":["a","b"],"filter":{"owner":"me"},"labels":{"x":0},"active":false}"#.into())
    );
    let cases: Vec<(Vec<(&str, Data)>, &str)> = vec![
        (vec![], "key: missing required argument"),
        (vec![("key", Data::Null)], "key: want str, got None"),
        (
            vec![("key", s("k")), ("nope", Data::Int(1))],
            "nope: unknown argument",
        ),
        (vec![("key", Data::Int(1))], "key: want str, got int"),
        (
            vec![("key", s("k")), ("limit", s("2"))],
            "limit: want int, got str",
        ),
        (
            vec![("key", s("k")), ("limit", Data::Float(2.0))],
            "limit: want int, got float",
        ),
        (
            vec![("key", s("k")), ("active", Data::Int(1))],
            "active: want bool, got int",
        ),
        (
            vec![("key", s("k")), ("score", Data::Bool(true))],
            "score: want float, got bool",
        ),
        (
            vec![("key", s("k")), ("limit", Data::Int(0))],
            "limit: must be at least 1",
        ),
        (
            vec![("key", s("k")), ("limit", Data::Int(101))],
            "limit: must be at most 100",
        ),
        (vec![("key", s(""))], "key: length must be at least 1"),
        (
            vec![("key", s("ééééééééé"))],
            "key: length must be at most 8",
        ),
        (
            vec![
                ("key", s("k")),
                ("tags", Data::List(vec![s("a"), Data::Int(1)])),
            ],
            "tags[1]: want str, got int",
        ),
        (
            vec![("key", s("k")), ("tags", Data::List(vec![s("a"), s("c")]))],
            r#"tags[1]: must be one of "a", "b""#,
        ),
        (
            vec![("key", s("k")), ("tags", s("a"))],
            "tags: want list[str], got str",
        ),
        (
            vec![
                ("key", s("k")),
                ("filter", Data::Map(vec![("owner".into(), Data::Int(1))])),
            ],
            "filter.owner: want str, got int",
        ),
        (
            vec![("key", s("k")), ("filter", Data::Map(vec![]))],
            "filter.owner: missing required field",
        ),
        (
            vec![
                ("key", s("k")),
                (
                    "filter",
                    Data::Map(vec![("owner".into(), s("me")), ("x".into(), Data::Null)]),
                ),
            ],
            "filter.x: unknown field",
        ),
        (
            vec![
                ("key", s("k")),
                ("filter", Data::Map(vec![("owner".into(), s("m"))])),
            ],
            "filter.owner: length must be at least 2",
        ),
        (
            vec![("key", s("k")), ("filter", Data::List(vec![]))],
            "filter: want dict, got list",
        ),
        (
            vec![
                ("key", s("k")),
                ("labels", Data::Map(vec![("a b".into(), Data::Int(-1))])),
            ],
            r#"labels["a b"]: must be at least 0"#,
        ),
    ];
    for (a, want) in cases {
        assert_eq!(bad(&a), want, "{a:?}");
    }
}

#[test]
fn rules_must_fit_their_fields() {
    let b = Catalog::builder().capability(
        Capability::new("records.find", |_: Input| async { Ok(Done { ok: true }) })
            .summary("Find.")
            .rule("nope", [Rule::MinLength(1)])
            .rule("key", [Rule::Minimum(1.into())])
            .rule("filter.nope", [Rule::MinLength(1)]),
    );
    let got = problems(b);
    assert_eq!(
        got,
        vec![
            Problem::Rule("records.find".into(), "nope".into(), RuleError::NoSuchField),
            Problem::Rule(
                "records.find".into(),
                "key".into(),
                RuleError::DoesNotApply("str".into())
            ),
            Problem::Rule(
                "records.find".into(),
                "filter.nope".into(),
                RuleError::NoSuchField
            ),
        ]
    );
    assert_eq!(
        got[1].to_string(),
        "capability \"records.find\": input rule on \"key\": the rule does not apply to str"
    );
}

#[test]
fn manifests_load_and_ignore_extra_keys() {
    let text = json!({
        "source": "test",
        "capabilities": [{
            "id": "repo.get", "name": "repo.get", "summary": "Get a repository.",
            "input_schema": {"type": "object", "properties": {"owner": {"type": "string"}}, "required": ["owner"]},
            "http": {"method": "GET"}
        }]
    })
    .to_string();
    let m = codemode_catalog::Manifest::from_json(&text).unwrap();
    let catalog = Catalog::builder().manifest(m).build().unwrap();
    let d = catalog.describe("repo.get").unwrap();
    assert_eq!(d.signature, "repo.get(*, owner: str)");
    assert!(d.output.is_empty());
}

#[test]
fn the_github_manifest_builds() {
    let Some(catalog) = github_manifest::catalog("the_github_manifest_builds") else {
        return;
    };
    assert_eq!(catalog.len(), 1223);
    let d = catalog.describe("github.issues.create").unwrap();
    assert!(
        d.signature
            .starts_with("github.issues.create(*, owner: str, repo: str, title: str"),
        "{}",
        d.signature
    );
}

#[test]
fn handler_errors_keep_details_private() {
    let e = HandlerError::internal("SECRET");
    assert_eq!(e.public_message(), None);
    assert_eq!(e.detail(), "SECRET");
    let long = "é".repeat(200);
    let e = HandlerError::public(long);
    assert_eq!(e.public_message().map(str::len), Some(256));
    assert_eq!(HandlerError::public("").public_message(), None);
}

#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Annotated {
    #[schemars(range(min = 1, max = 5000))]
    weight_grams: i64,
    #[schemars(length(min = 1, max = 3))]
    tags: Vec<String>,
    small: u8,
    mode: Mode,
}

#[derive(Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum Mode {
    Fast,
    SlowAndSteady,
}

#[test]
fn schemars_attributes_and_integer_kinds_become_rules() {
    let catalog = Catalog::builder()
        .capability(
            Capability::new("shipping.annotated", |_: Annotated| async {
                Ok(Done { ok: true })
            })
            .summary("Annotated."),
        )
        .build()
        .unwrap();
    let fields = catalog.get("shipping.annotated").unwrap().input().to_vec();
    let base = || {
        vec![
            ("weight_grams".to_string(), Data::Int(1)),
            ("tags".to_string(), Data::List(vec![s("a")])),
            ("small".to_string(), Data::Int(255)),
            ("mode".to_string(), s("slow_and_steady")),
        ]
    };
    assert!(bind(&fields, base()).is_ok());
    let with = |i: usize, v: Data| {
        let mut a = base();
        a[i].1 = v;
        bind(&fields, a).unwrap_err().0
    };
    assert_eq!(
        with(0, Data::Int(5001)),
        "weight_grams: must be at most 5000"
    );
    assert_eq!(
        with(1, Data::List(vec![])),
        "tags: length must be at least 1"
    );
    assert_eq!(with(2, Data::Int(256)), "small: must be at most 255");
    assert_eq!(with(2, Data::Int(-1)), "small: must be at least 0");
    assert_eq!(
        with(3, s("slow")),
        r#"mode: must be one of "fast", "slow_and_steady""#
    );
}
