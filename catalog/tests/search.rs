//! Search: the reference's contract on small catalogs, and ranking quality
//! on the 1,223 real GitHub REST operations (when `CODEMODE_GITHUB_MANIFEST`
//! names their manifest; see `github_manifest/mod.rs`).

use codemode_catalog::{Capability, Catalog, HandlerError, NoInput, SearchLimits, SearchResponse};
use schemars::JsonSchema;
use serde::Serialize;
use std::sync::OnceLock;

mod github_manifest;

#[derive(Serialize, JsonSchema)]
struct Out {
    ok: bool,
}

fn cap(name: &str, summary: &str) -> Capability {
    Capability::new(name, |_: NoInput| async {
        Err::<Out, _>(HandlerError::internal("x"))
    })
    .summary(summary)
}

/// The GitHub catalog, or `None` when its manifest is not configured
/// (`what` is named in the line that says the test was skipped).
fn github(what: &str) -> Option<&'static Catalog> {
    static CATALOG: OnceLock<Option<Catalog>> = OnceLock::new();
    let catalog = CATALOG
        .get_or_init(|| github_manifest::path().and_then(|_| github_manifest::catalog(what)))
        .as_ref();
    if catalog.is_none() {
        github_manifest::skipped(what);
    }
    catalog
}

/// A small catalog that lives in the repository, for the rules that do not
/// depend on the catalog's size.
fn small() -> Catalog {
    Catalog::builder()
        .capability(cap("issues.create", "Create an issue in a repository."))
        .capability(cap("issues.list", "List the issues of a repository."))
        .capability(cap("pulls.merge", "Merge a pull request."))
        .build()
        .unwrap()
}

fn names(r: &SearchResponse) -> Vec<&str> {
    r.results.iter().map(|x| x.name.as_str()).collect()
}

#[test]
fn an_exact_match_ranks_above_a_prefix_match() {
    // `review` is exact in the first name, a prefix of `reviews` in the
    // second, which the query covers more fully: exact still ranks first.
    let catalog = Catalog::builder()
        .capability(cap("aa.review_comments_thread_list", "Do one thing."))
        .capability(cap("bb.reviews", "Do another thing."))
        .build()
        .unwrap();
    assert_eq!(
        names(&catalog.search("review").unwrap()),
        ["aa.review_comments_thread_list", "bb.reviews"]
    );
    // Within the summary too, and a token that also matches other fields
    // counts once, by its strongest match.
    let catalog = Catalog::builder()
        .capability(cap(
            "aa.one",
            "Review the long list of open comment threads.",
        ))
        .capability(cap("bb.two", "Reviews."))
        .capability(cap("cc.three", "Reviews.").description("Review reviews of a review."))
        .build()
        .unwrap();
    assert_eq!(
        names(&catalog.search("review").unwrap()),
        ["aa.one", "bb.two", "cc.three"]
    );
}

#[test]
fn separators_are_what_is_not_a_letter_or_digit() {
    // `²` and `½` (No) and `Ⅻ` (Nl) separate tokens; `İ` lower-cases to `i`.
    let catalog = Catalog::builder()
        .capability(cap("records.lookup", "Look up records by chapter."))
        .build()
        .unwrap();
    for q in ["records²", "½records", "recordsⅫ", "²½Ⅻ records ²"] {
        assert_eq!(
            names(&catalog.search(q).unwrap()),
            ["records.lookup"],
            "{q}"
        );
    }
    assert_eq!(
        codemode_catalog::tokenize("a²b ½c Ⅻd İstanbul ǅemal ٣x"),
        ["a", "b", "c", "d", "istanbul", "ǆemal", "٣", "x"]
    );
}

#[test]
fn empty_queries_return_the_exact_empty_object() {
    let small = small();
    let github = github("empty_queries_return_the_exact_empty_object (on the GitHub catalog)");
    for catalog in std::iter::once(&small).chain(github) {
        for q in [
            "",
            "   ",
            " ._-/ ",
            "the and of",
            "zzzqqq",
            "kubernetes helm chart",
        ] {
            let r = catalog.search(q).unwrap();
            assert_eq!(
                serde_json::to_string(&r).unwrap(),
                r#"{"results":[],"truncated":false}"#,
                "{q:?}"
            );
        }
    }
}

#[test]
fn the_populated_sample_is_byte_exact() {
    #[derive(serde::Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct In {
        key: String,
        limit: Option<i64>,
    }
    let catalog = Catalog::builder()
        .capability(
            Capability::new("records.lookup", |_: In| async { Ok(Out { ok: true }) })
                .summary("Look up one record by key."),
        )
        .capability(cap("shipping.quote", "Quote domestic shipping."))
        .build()
        .unwrap();
    let r = catalog.search("lookup record").unwrap();
    assert_eq!(
        serde_json::to_string_pretty(&r).unwrap(),
        r#"{
  "results": [
    {
      "name": "records.lookup",
      "signature": "records.lookup(*, key: str, limit: int | None)",
      "summary": "Look up one record by key."
    }
  ],
  "truncated": false
}"#
    );
}

#[test]
fn query_bounds_are_resource_limits() {
    let catalog = small();
    let at_limit = format!("issue{}", " ".repeat(251));
    assert_eq!(at_limit.len(), 256);
    assert!(catalog.search(&at_limit).is_ok());
    let over = format!("{at_limit} ");
    assert_eq!(
        catalog.search(&over).unwrap_err().to_string(),
        "resource limit exceeded"
    );
    let sixteen = "b1 c2 d3 e4 f5 g6 h7 j8"; // 16 tokens: letters and digits split
    assert!(catalog.search(sixteen).is_ok());
    let seventeen = "b1 c2 d3 e4 f5 g6 h7 j8 k";
    assert_eq!(
        catalog.search(seventeen).unwrap_err().to_string(),
        "resource limit exceeded"
    );
    // Duplicates and connectors do not count.
    assert!(catalog
        .search("b1 c2 d3 e4 f5 g6 h7 j8 b1 the of and to a")
        .is_ok());
}

#[test]
fn eligibility_needs_enough_matched_tokens() {
    let catalog = Catalog::builder()
        .capability(cap("alpha.one", "Alpha beta gamma."))
        .capability(cap("alpha.two", "Alpha beta."))
        .capability(cap("alpha.three", "Alpha."))
        .build()
        .unwrap();
    // q = 2: both needed.
    assert_eq!(names(&catalog.search("beta gamma").unwrap()), ["alpha.one"]);
    // q = 3: ceil(2) = 2 needed.
    assert_eq!(
        names(&catalog.search("beta gamma delta").unwrap()),
        ["alpha.one"]
    );
    // q = 4: ceil(8/3) = 3 needed.
    assert_eq!(
        names(&catalog.search("alpha beta gamma delta").unwrap()),
        ["alpha.one"]
    );
    assert!(catalog
        .search("beta delta epsilon zeta")
        .unwrap()
        .results
        .is_empty());
    // Prefixes need three characters.
    assert_eq!(names(&catalog.search("gam").unwrap()), ["alpha.one"]);
    assert!(catalog.search("ga").unwrap().results.is_empty());
    // No infix matching.
    assert!(catalog.search("amma").unwrap().results.is_empty());
}

#[test]
fn exact_dotted_names_rank_first_case_insensitively() {
    let catalog = Catalog::builder()
        .capability(cap("records.lookup", "Look up one record by key."))
        .capability(cap(
            "records.lookup_many",
            "Look up records lookup lookup records.",
        ))
        .build()
        .unwrap();
    let r = catalog.search("  RECORDS.Lookup ").unwrap();
    assert_eq!(names(&r), ["records.lookup", "records.lookup_many"]);
}

#[test]
fn ties_order_by_name_and_bounds_truncate() {
    let caps: Vec<Capability> = (0..30)
        .map(|i| cap(&format!("ns.op{i:02}"), "Same words here."))
        .collect();
    let catalog = Catalog::builder().capabilities(caps).build().unwrap();
    let r = catalog.search("same words").unwrap();
    assert_eq!(r.results.len(), 20);
    assert!(r.truncated);
    assert_eq!(r.results[0].name, "ns.op00");
    assert_eq!(r.results[19].name, "ns.op19");
    let tight = SearchLimits {
        max_response_bytes: 200,
        ..SearchLimits::default()
    };
    let r = catalog.search_with("same words", &tight).unwrap();
    assert!(r.truncated);
    assert!(serde_json::to_string(&r).unwrap().len() <= 200);
    assert_eq!(r.results.len(), 2);
    let none_fit = SearchLimits {
        max_response_bytes: 40,
        ..SearchLimits::default()
    };
    let r = catalog.search_with("same words", &none_fit).unwrap();
    assert_eq!(
        serde_json::to_string(&r).unwrap(),
        r#"{"results":[],"truncated":true}"#
    );
}

#[test]
fn field_precedence_name_over_terms_over_summary_over_description() {
    let catalog = Catalog::builder()
        .capability(cap("zz.widget", "Something."))
        .capability(cap("yy.other", "Something.").search_terms(["widget"]))
        .capability(cap("xx.other", "A widget."))
        .capability(cap("ww.other", "Something.").description("Mentions a widget."))
        .build()
        .unwrap();
    assert_eq!(
        names(&catalog.search("widget").unwrap()),
        ["zz.widget", "yy.other", "xx.other", "ww.other"]
    );
}

/// Realistic agent queries and the capability each one means.
const QUERIES: &[(&str, &str)] = &[
    ("create an issue", "github.issues.create"),
    ("create a new issue in a repository", "github.issues.create"),
    ("comment on an issue", "github.issues.createComment"),
    ("add labels to an issue", "github.issues.addLabels"),
    ("assign a user to an issue", "github.issues.addAssignees"),
    ("close or update an issue", "github.issues.update"),
    ("list issues in a repository", "github.issues.listForRepo"),
    ("lock an issue", "github.issues.lock"),
    ("list milestones", "github.issues.listMilestones"),
    ("create a milestone", "github.issues.createMilestone"),
    ("create a pull request", "github.pulls.create"),
    ("merge a pull request", "github.pulls.merge"),
    ("list pull requests", "github.pulls.list"),
    (
        "request reviewers for a pull request",
        "github.pulls.requestReviewers",
    ),
    (
        "list files changed in a pull request",
        "github.pulls.listFiles",
    ),
    ("list commits on a pull request", "github.pulls.listCommits"),
    ("submit a pull request review", "github.pulls.submitReview"),
    (
        "check if a pull request was merged",
        "github.pulls.checkIfMerged",
    ),
    ("get a repository", "github.repos.get"),
    ("delete a repository", "github.repos.delete"),
    ("list branches", "github.repos.listBranches"),
    ("get a branch", "github.repos.getBranch"),
    ("get branch protection", "github.repos.getBranchProtection"),
    ("list commits", "github.repos.listCommits"),
    ("compare two commits", "github.repos.compareCommits"),
    ("get repository content", "github.repos.getContent"),
    (
        "create or update file contents",
        "github.repos.createOrUpdateFileContents",
    ),
    ("delete a file", "github.repos.deleteFile"),
    ("get the readme of a repository", "github.repos.getReadme"),
    ("create a release", "github.repos.createRelease"),
    ("get the latest release", "github.repos.getLatestRelease"),
    ("list releases", "github.repos.listReleases"),
    ("upload a release asset", "github.repos.uploadReleaseAsset"),
    ("fork a repository", "github.repos.createFork"),
    ("list forks", "github.repos.listForks"),
    (
        "list repository contributors",
        "github.repos.listContributors",
    ),
    ("list repository languages", "github.repos.listLanguages"),
    (
        "add a collaborator to a repository",
        "github.repos.addCollaborator",
    ),
    ("create a repository webhook", "github.repos.createWebhook"),
    ("list repository tags", "github.repos.listTags"),
    ("transfer a repository", "github.repos.transfer"),
    (
        "create a repository from a template",
        "github.repos.createUsingTemplate",
    ),
    ("list organization repositories", "github.repos.listForOrg"),
    ("list repositories for a user", "github.repos.listForUser"),
    ("create a commit status", "github.repos.createCommitStatus"),
    ("create a deployment", "github.repos.createDeployment"),
    (
        "list workflow runs for a repository",
        "github.actions.listWorkflowRunsForRepo",
    ),
    ("cancel a workflow run", "github.actions.cancelWorkflowRun"),
    ("re-run a workflow", "github.actions.reRunWorkflow"),
    (
        "download workflow run logs",
        "github.actions.downloadWorkflowRunLogs",
    ),
    (
        "trigger a workflow dispatch event",
        "github.actions.createWorkflowDispatch",
    ),
    (
        "list jobs for a workflow run",
        "github.actions.listJobsForWorkflowRun",
    ),
    (
        "list repository workflows",
        "github.actions.listRepoWorkflows",
    ),
    (
        "list artifacts for a repository",
        "github.actions.listArtifactsForRepo",
    ),
    (
        "create or update a repository secret for actions",
        "github.actions.createOrUpdateRepoSecret",
    ),
    (
        "list self-hosted runners for a repository",
        "github.actions.listSelfHostedRunnersForRepo",
    ),
    ("search code", "github.search.code"),
    ("search repositories", "github.search.repos"),
    (
        "search issues and pull requests",
        "github.search.issuesAndPullRequests",
    ),
    ("search users", "github.search.users"),
    ("create a gist", "github.gists.create"),
    ("list public gists", "github.gists.listPublic"),
    ("star a gist", "github.gists.star"),
    (
        "star a repository",
        "github.activity.starRepoForAuthenticatedUser",
    ),
    ("list stargazers", "github.activity.listStargazersForRepo"),
    (
        "list notifications for the authenticated user",
        "github.activity.listNotificationsForAuthenticatedUser",
    ),
    (
        "get the authenticated user",
        "github.users.getAuthenticated",
    ),
    ("follow a user", "github.users.follow"),
    (
        "list followers of a user",
        "github.users.listFollowersForUser",
    ),
    ("render markdown", "github.markdown.render"),
    ("get rate limit status", "github.rateLimit.get"),
    ("get a license", "github.licenses.get"),
    ("get emojis", "github.emojis.get"),
    ("get a gitignore template", "github.gitignore.getTemplate"),
    ("create a git tree", "github.git.createTree"),
    ("create a git reference", "github.git.createRef"),
    ("create a blob", "github.git.createBlob"),
    (
        "add a reaction to an issue",
        "github.reactions.createForIssue",
    ),
    ("create a check run", "github.checks.create"),
    ("list organization members", "github.orgs.listMembers"),
    ("remove an organization member", "github.orgs.removeMember"),
    ("create a team", "github.teams.create"),
    ("list team members", "github.teams.listMembersInOrg"),
    (
        "list dependabot alerts for a repository",
        "github.dependabot.listAlertsForRepo",
    ),
    (
        "list code scanning alerts for a repository",
        "github.codeScanning.listAlertsForRepo",
    ),
    ("github.pulls.createReview", "github.pulls.createReview"),
    ("GitHub.Issues.Get", "github.issues.get"),
    ("createCommitComment", "github.repos.createCommitComment"),
];

#[test]
fn realistic_queries_find_the_intended_capability() {
    let Some(catalog) = github("realistic_queries_find_the_intended_capability") else {
        return;
    };
    let mut top1 = 0;
    let mut top5 = 0;
    let mut misses = Vec::new();
    for (q, want) in QUERIES {
        let r = catalog.search(q).unwrap();
        let got = names(&r);
        match got.iter().position(|n| n == want) {
            Some(0) => {
                top1 += 1;
                top5 += 1;
            }
            Some(i) if i < 5 => {
                top5 += 1;
                misses.push(format!("{q:?}: {want} at {i}, top {:?}", &got[..i]));
            }
            _ => misses.push(format!(
                "{q:?}: {want} missing, top {:?}",
                &got[..got.len().min(3)]
            )),
        }
    }
    let n = QUERIES.len();
    println!("search quality: {n} queries, top-1 {top1}/{n}, top-5 {top5}/{n}");
    for m in &misses {
        println!("  {m}");
    }
    assert!(n >= 60);
    assert!(top1 * 10 >= n * 9, "top-1 {top1}/{n}: {misses:#?}");
}

#[test]
fn unrelated_queries_find_nothing() {
    let Some(catalog) = github("unrelated_queries_find_nothing") else {
        return;
    };
    for q in [
        "weather forecast tomorrow",
        "convert celsius fahrenheit",
        "book a flight hotel",
        "translate french",
        "mysql",
        "sql",
        "kubernetes pod",
        "pizza delivery",
    ] {
        let r = catalog.search(q).unwrap();
        assert!(r.results.is_empty(), "{q}: {:?}", names(&r));
    }
}
