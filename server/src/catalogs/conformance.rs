//! The built-in `conformance` catalog: deterministic capabilities that
//! exercise every path of the contract (echo, arithmetic with overflow,
//! optional arguments, large and deep results, public and private handler
//! failures, a panic, invalid outputs, a cancellable sleep, a denial, a
//! policy failure, a destructive delete for approvals and a capability
//! disabled by ID). Every capability but `conformance.delete` is read-only
//! and not destructive; `conformance.delete` is destructive (it deletes
//! nothing: it answers `{deleted: key}`). Its [`policy`] denies
//! `conformance.denied`, fails for `conformance.policy_error` and allows
//! the rest.

use codemode_catalog::{
    Annotations, AuthorizationRequest, Capability, Decision, HandlerError, NoInput, Policy,
    PolicyError, Rule,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The ID of the capability the policy denies.
pub const DENIED_ID: &str = "conformance.denied";
/// The ID of the capability the policy fails to evaluate for.
pub const POLICY_ERROR_ID: &str = "conformance.policy_error";
/// The ID of the capability registered, then disabled.
pub const HIDDEN_ID: &str = "conformance.hidden";
/// The private detail of `conformance.fail(public=False)`; it must never
/// reach a client.
pub const SECRET_DETAIL: &str = "SECRET-HANDLER-DETAIL: internal conformance failure";

#[derive(Deserialize, JsonSchema)]
struct EchoInput {
    value: String,
}

#[derive(Serialize, JsonSchema)]
struct EchoOutput {
    value: String,
}

async fn echo(input: EchoInput) -> Result<EchoOutput, HandlerError> {
    Ok(EchoOutput { value: input.value })
}

#[derive(Deserialize, JsonSchema)]
struct AddInput {
    a: i64,
    b: i64,
}

#[derive(Serialize, JsonSchema)]
struct AddOutput {
    sum: i64,
}

async fn add(input: AddInput) -> Result<AddOutput, HandlerError> {
    let sum = input
        .a
        .checked_add(input.b)
        .ok_or_else(|| HandlerError::internal("integer overflow"))?;
    Ok(AddOutput { sum })
}

#[derive(Deserialize, JsonSchema)]
struct PresentInput {
    s: Option<String>,
    i: Option<i64>,
    b: Option<bool>,
    f: Option<f64>,
}

#[derive(Serialize, JsonSchema)]
struct PresentOutput {
    names: Vec<String>,
}

async fn present(input: PresentInput) -> Result<PresentOutput, HandlerError> {
    let mut names = Vec::new();
    for (name, present) in [
        ("b", input.b.is_some()),
        ("f", input.f.is_some()),
        ("i", input.i.is_some()),
        ("s", input.s.is_some()),
    ] {
        if present {
            names.push(name.to_string());
        }
    }
    Ok(PresentOutput { names })
}

#[derive(Deserialize, JsonSchema)]
struct ItemsInput {
    n: i64,
}

#[derive(Serialize, JsonSchema)]
struct Item {
    index: i64,
    label: String,
}

#[derive(Serialize, JsonSchema)]
struct ItemsOutput {
    items: Vec<Item>,
}

async fn items(input: ItemsInput) -> Result<ItemsOutput, HandlerError> {
    let items = (0..input.n.max(0))
        .map(|index| Item {
            index,
            label: format!("item-{index}"),
        })
        .collect();
    Ok(ItemsOutput { items })
}

#[derive(Serialize, JsonSchema)]
struct DeepC {
    d: i64,
}

#[derive(Serialize, JsonSchema)]
struct DeepB {
    c: DeepC,
}

#[derive(Serialize, JsonSchema)]
struct DeepA {
    b: DeepB,
}

#[derive(Serialize, JsonSchema)]
struct DeepOutput {
    a: DeepA,
}

async fn deep(_: NoInput) -> Result<DeepOutput, HandlerError> {
    Ok(DeepOutput {
        a: DeepA {
            b: DeepB { c: DeepC { d: 1 } },
        },
    })
}

#[derive(Deserialize, JsonSchema)]
struct FailInput {
    public: bool,
}

#[derive(Serialize, JsonSchema)]
struct Nothing {}

async fn fail(input: FailInput) -> Result<Nothing, HandlerError> {
    if input.public {
        Err(HandlerError::public("conformance failure"))
    } else {
        Err(HandlerError::internal(SECRET_DETAIL))
    }
}

async fn panic(_: NoInput) -> Result<Nothing, HandlerError> {
    panic!("conformance panic");
}

#[derive(Serialize, JsonSchema)]
struct FloatOutput {
    value: f64,
}

async fn nan(_: NoInput) -> Result<FloatOutput, HandlerError> {
    Ok(FloatOutput { value: f64::NAN })
}

#[derive(Serialize, JsonSchema)]
struct UnsignedOutput {
    value: u64,
}

async fn huge_unsigned(_: NoInput) -> Result<UnsignedOutput, HandlerError> {
    Ok(UnsignedOutput { value: u64::MAX })
}

#[derive(Deserialize, JsonSchema)]
struct SleepInput {
    ms: i64,
}

#[derive(Serialize, JsonSchema)]
struct SleepOutput {
    slept: i64,
}

/// Sleeps; the service aborts the handler's task on cancellation or
/// deadline, which ends the sleep early.
async fn sleep(input: SleepInput) -> Result<SleepOutput, HandlerError> {
    let ms = input.ms.max(0);
    tokio::time::sleep(Duration::from_millis(ms.unsigned_abs())).await;
    Ok(SleepOutput { slept: ms })
}

#[derive(Serialize, JsonSchema)]
struct OkOutput {
    ok: bool,
}

async fn ok(_: NoInput) -> Result<OkOutput, HandlerError> {
    Ok(OkOutput { ok: true })
}

#[derive(Deserialize, JsonSchema)]
struct DeleteInput {
    key: String,
}

#[derive(Serialize, JsonSchema)]
struct DeleteOutput {
    deleted: String,
}

async fn delete(input: DeleteInput) -> Result<DeleteOutput, HandlerError> {
    Ok(DeleteOutput { deleted: input.key })
}

/// The ID of the destructive capability.
pub const DELETE_ID: &str = "conformance.delete";

/// The capabilities of the `conformance` catalog (including the one that
/// [`disabled`] lists).
pub fn capabilities() -> Vec<Capability> {
    let reading = vec![
        Capability::new("conformance.echo", echo)
            .summary("Echo a string value back unchanged.")
            .description("Returns {value} with the given string, for round-trip checks."),
        Capability::new("conformance.add", add)
            .summary("Add two integers.")
            .description(
                "Returns {sum: a + b}; a sum outside the signed 64-bit range fails with \
                 capability failed.",
            ),
        Capability::new("conformance.present", present)
            .summary("List which optional arguments were present.")
            .description(
                "Returns the sorted names of the optional arguments s, i, b and f present in \
                 the canonical argument map; omitted and None arguments are absent.",
            ),
        Capability::new("conformance.items", items)
            .summary("Generate a list of numbered items.")
            .description(
                "Returns n items (0 to 1000000) with index and label item-<index>, for size \
                 and budget checks.",
            )
            .rule("n", Rule::range(0, 1_000_000)),
        Capability::new("conformance.deep", deep)
            .summary("Return a nested result four levels deep.")
            .description("Returns {a: {b: {c: {d: 1}}}} for depth checks."),
        Capability::new("conformance.fail", fail)
            .summary("Always fail, with a public or a private message.")
            .description(
                "Fails every call; with public=True the client sees the public message \
                 conformance failure, otherwise only capability failed.",
            ),
        Capability::new("conformance.panic", panic)
            .summary("Panic inside the handler.")
            .description("The handler panics; the call fails with capability failed and the server keeps serving."),
        Capability::new("conformance.nan", nan)
            .summary("Return a non-finite float.")
            .description("Returns NaN, an invalid output, so the call fails with capability failed."),
        Capability::new("conformance.huge_unsigned", huge_unsigned)
            .summary("Return an unsigned integer above the signed 64-bit maximum.")
            .description("Returns an unsigned value above i64::MAX, an invalid output, so the call fails with capability failed."),
        Capability::new("conformance.sleep", sleep)
            .summary("Sleep for some milliseconds.")
            .description(
                "Sleeps ms milliseconds (0 to 60000), stopping early on cancellation or \
                 deadline, and returns {slept}.",
            )
            .rule("ms", Rule::range(0, 60_000)),
        Capability::new("conformance.denied", ok)
            .id(DENIED_ID)
            .summary("A capability the policy denies.")
            .description("Every call is denied by the catalog's policy: permission denied."),
        Capability::new("conformance.policy_error", ok)
            .id(POLICY_ERROR_ID)
            .summary("A capability for which the policy fails to evaluate.")
            .description("The catalog's policy fails for every call: authorization policy failure."),
        Capability::new("conformance.hidden", ok)
            .id(HIDDEN_ID)
            .summary("A hidden capability, disabled by ID.")
            .description("Registered, then disabled: absent from search, describe and execute."),
    ];
    let mut all: Vec<Capability> = reading
        .into_iter()
        .map(|c| c.annotations(Annotations::read_only_closed()))
        .collect();
    all.push(
        Capability::new("conformance.delete", delete)
            .id(DELETE_ID)
            .summary("Delete an entry by key (a destructive capability for approval tests).")
            .description(
                "Annotated destructive, so an approval policy asks a person before it runs;                  deletes nothing and returns {deleted: key}.",
            )
            .search_terms(["remove entry", "approval"])
            .annotations(Annotations {
                read_only: false,
                destructive: true,
                idempotent: true,
                open_world: false,
            }),
    );
    all
}

/// The IDs this catalog disables.
pub fn disabled() -> Vec<&'static str> {
    vec![HIDDEN_ID]
}

/// The catalog's policy: denies [`DENIED_ID`], fails for
/// [`POLICY_ERROR_ID`], allows everything else.
pub fn policy() -> ConformancePolicy {
    ConformancePolicy
}

/// See [`policy`].
#[derive(Clone, Copy, Debug, Default)]
pub struct ConformancePolicy;

impl Policy for ConformancePolicy {
    fn authorize(&self, request: &AuthorizationRequest<'_>) -> Result<Decision, PolicyError> {
        match request.capability_id.as_str() {
            DENIED_ID => Ok(Decision::Deny),
            POLICY_ERROR_ID => Err(PolicyError("conformance policy failure".into())),
            _ => Ok(Decision::Allow),
        }
    }
}
