//! Code mode over REST APIs, against a real HTTP server started here: an
//! OpenAPI 3.1 document in JSON (`fixture/openapi/pets.json`: CRUD, path,
//! query, header and body parameters, arrays, 204, 4xx with messages, a
//! number and a text answer) and a 3.0 document in YAML
//! (`fixture/openapi/store.yaml`: an operation without an operationId,
//! enums and ranges, `nullable`, a bearer token, a slow endpoint, redirects
//! within and out of the origin, a long answer, a text body), both fetched
//! from the server. Programs run through the service as `execute` runs
//! them, and through the built binary with `--openapi` and a
//! configuration file.

mod common;

use axum::extract::Request;
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use codemode_catalog::{CancellationToken, CodeMode, Config, ExecuteOptions, Subject};
use codemode_server::{catalog_sources, collect_openapi, load_openapi};
use codemode_server::{HttpVersion, OpenApiConfig};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const PETS: &str = include_str!("fixture/openapi/pets.json");
const STORE: &str = include_str!("fixture/openapi/store.yaml");
/// The bearer token the store's secure endpoint wants.
const TOKEN: &str = "s3cret-token";

/// The API's state: pets, orders, and what the tests watch.
#[derive(Default)]
struct Api {
    port: u16,
    other_port: u16,
    pets: Mutex<BTreeMap<i64, Value>>,
    orders: Mutex<BTreeMap<i64, Value>>,
    next_id: AtomicUsize,
    slow_started: AtomicUsize,
    slow_dropped: AtomicUsize,
    other_hits: Arc<AtomicUsize>,
    /// The HTTP version of each call to the pets API.
    versions: Mutex<Vec<axum::http::Version>>,
}

fn json_response(status: StatusCode, value: Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}

fn text_response(status: StatusCode, text: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        text.to_string(),
    )
        .into_response()
}

fn redirect(status: StatusCode, to: String) -> Response {
    (status, [(header::LOCATION, to)]).into_response()
}

/// Counts the slow requests whose handler was dropped before it answered.
struct DropWatch<'a>(&'a AtomicUsize, bool);

impl Drop for DropWatch<'_> {
    fn drop(&mut self) {
        if !self.1 {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

impl Api {
    async fn handle(&self, request: Request) -> Response {
        let (parts, body) = request.into_parts();
        let body = axum::body::to_bytes(body, 1 << 20)
            .await
            .unwrap_or_default();
        let path = parts.uri.path().to_string();
        let query = parts.uri.query().unwrap_or("").to_string();
        let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let method = parts.method.clone();
        let headers = &parts.headers;
        if segments.first() == Some(&"api") {
            self.versions.lock().expect("versions").push(parts.version);
        }
        match (method, segments.as_slice()) {
            (Method::GET, ["openapi.json"]) => json_response(
                StatusCode::OK,
                serde_json::from_str(PETS).expect("fixture JSON"),
            ),
            (Method::GET, ["openapi.yaml"]) => text_response(
                StatusCode::OK,
                &STORE.replace("127.0.0.1:PORT", &format!("127.0.0.1:{}", self.port)),
            ),
            (m, ["api", rest @ ..]) => self.pets_api(m, rest, &query, headers, &body),
            (m, ["store", rest @ ..]) => self.store_api(m, rest, headers, &body).await,
            _ => text_response(StatusCode::NOT_FOUND, "no such route"),
        }
    }

    fn pets_api(
        &self,
        method: Method,
        path: &[&str],
        query: &str,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Response {
        let header = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let mut pets = self.pets.lock().expect("pets");
        match (method, path) {
            (Method::GET, ["pets"]) => {
                let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
                    .into_owned()
                    .collect();
                let tags: Vec<&str> = pairs
                    .iter()
                    .filter(|(k, _)| k == "tag")
                    .map(|(_, v)| v.as_str())
                    .collect();
                let limit = pairs
                    .iter()
                    .find(|(k, _)| k == "limit")
                    .and_then(|(_, v)| v.parse().ok())
                    .unwrap_or(usize::MAX);
                let list: Vec<Value> = pets
                    .values()
                    .filter(|p| tags.is_empty() || tags.iter().any(|t| p["tag"] == *t))
                    .take(limit)
                    .cloned()
                    .collect();
                let mut response = json_response(StatusCode::OK, Value::Array(list));
                if let Some(id) = header("x-request-id") {
                    if let Ok(v) = id.parse() {
                        response.headers_mut().insert("x-request-id", v);
                    }
                }
                response
            }
            (Method::POST, ["pets"]) => {
                let Ok(new) = serde_json::from_slice::<Value>(body) else {
                    return json_response(StatusCode::BAD_REQUEST, json!({"message": "not JSON"}));
                };
                if pets.values().any(|p| p["name"] == new["name"]) {
                    return json_response(
                        StatusCode::CONFLICT,
                        json!({"message": format!("a pet named {} exists", new["name"])}),
                    );
                }
                let id = self.next_id.fetch_add(1, Ordering::SeqCst) as i64 + 1;
                let pet = json!({"id": id, "name": new["name"], "tag": new.get("tag").cloned().unwrap_or(Value::Null)});
                pets.insert(id, pet.clone());
                json_response(StatusCode::CREATED, pet)
            }
            (method, ["pets", id]) => {
                let Ok(id) = id.parse::<i64>() else {
                    return json_response(StatusCode::BAD_REQUEST, json!({"message": "bad id"}));
                };
                if !pets.contains_key(&id) {
                    return json_response(
                        StatusCode::NOT_FOUND,
                        json!({"message": format!("pet {id} not found")}),
                    );
                }
                match method {
                    Method::GET => json_response(StatusCode::OK, pets[&id].clone()),
                    Method::DELETE => {
                        pets.remove(&id);
                        StatusCode::NO_CONTENT.into_response()
                    }
                    Method::PUT => {
                        let new: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
                        if new.get("pet_id").is_some_and(|p| *p != json!(id)) {
                            return json_response(
                                StatusCode::UNPROCESSABLE_ENTITY,
                                json!({"error": "the body's pet_id is not the path's"}),
                            );
                        }
                        let pet = json!({"id": id, "name": new["name"], "tag": new.get("tag").cloned().unwrap_or(Value::Null)});
                        pets.insert(id, pet.clone());
                        json_response(StatusCode::OK, pet)
                    }
                    _ => StatusCode::METHOD_NOT_ALLOWED.into_response(),
                }
            }
            (Method::GET, ["echo", _]) => json_response(
                StatusCode::OK,
                json!({
                    "path": path.join("/"),
                    "query": query,
                    "trace": header("x-trace"),
                    "api_version": header("x-api-version"),
                    "authorization": header("authorization"),
                    "accept": header("accept"),
                    "extra": "dropped by the output shape",
                }),
            ),
            (Method::GET, ["count"]) => json_response(StatusCode::OK, json!(pets.len())),
            (Method::GET, ["readme"]) => text_response(StatusCode::OK, "Pets API\nversion 1"),
            _ => text_response(StatusCode::NOT_FOUND, "no such route"),
        }
    }

    async fn store_api(
        &self,
        method: Method,
        path: &[&str],
        headers: &HeaderMap,
        body: &[u8],
    ) -> Response {
        match (method, path) {
            (Method::GET, ["orders"]) => {
                let orders = self.orders.lock().expect("orders");
                json_response(StatusCode::OK, json!(orders.values().collect::<Vec<_>>()))
            }
            (Method::POST, ["orders"]) => {
                let new: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
                let mut orders = self.orders.lock().expect("orders");
                let id = orders.len() as i64 + 100;
                let order = json!({"id": id, "item": new["item"], "quantity": new["quantity"], "note": new.get("note").cloned().unwrap_or(Value::Null)});
                orders.insert(id, order.clone());
                json_response(StatusCode::CREATED, order)
            }
            (method, ["orders", id]) => {
                let id: i64 = id.parse().unwrap_or(-1);
                let mut orders = self.orders.lock().expect("orders");
                match (method, orders.contains_key(&id)) {
                    (_, false) => text_response(
                        StatusCode::NOT_FOUND,
                        &format!("order {id} does not exist\n\nsee the docs"),
                    ),
                    (Method::DELETE, true) => {
                        orders.remove(&id);
                        StatusCode::NO_CONTENT.into_response()
                    }
                    (_, true) => json_response(StatusCode::OK, orders[&id].clone()),
                }
            }
            (Method::GET, ["secure", "summary"]) => {
                let auth = headers
                    .get(header::AUTHORIZATION)
                    .and_then(|v| v.to_str().ok());
                if auth != Some(&format!("Bearer {TOKEN}")) {
                    return text_response(StatusCode::UNAUTHORIZED, "token rejected");
                }
                let total = self.orders.lock().expect("orders").len();
                json_response(StatusCode::OK, json!({"total": total}))
            }
            (Method::GET, ["slow"]) => {
                self.slow_started.fetch_add(1, Ordering::SeqCst);
                let mut watch = DropWatch(&self.slow_dropped, false);
                tokio::time::sleep(Duration::from_secs(10)).await;
                watch.1 = true;
                json_response(StatusCode::OK, json!({"done": true}))
            }
            (Method::GET, ["moved"]) => redirect(
                StatusCode::FOUND,
                format!("http://127.0.0.1:{}/store/orders", self.other_port),
            ),
            (Method::GET, ["old-orders"]) => {
                redirect(StatusCode::MOVED_PERMANENTLY, "/store/orders".into())
            }
            (Method::GET, ["big"]) => {
                json_response(StatusCode::OK, json!((0..5000).collect::<Vec<i64>>()))
            }
            (Method::POST, ["notes"]) => {
                let text = String::from_utf8_lossy(body);
                text_response(StatusCode::CREATED, &format!("stored: {text}"))
            }
            _ => text_response(StatusCode::NOT_FOUND, "no such route"),
        }
    }
}

/// The API server and another origin, on a runtime of their own.
struct Server {
    api: Arc<Api>,
    _runtime: tokio::runtime::Runtime,
}

impl Server {
    fn start() -> Server {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let (listener, other) = runtime.block_on(async {
            let a = tokio::net::TcpListener::bind("127.0.0.1:0").await;
            let b = tokio::net::TcpListener::bind("127.0.0.1:0").await;
            (a.expect("bind"), b.expect("bind"))
        });
        let other_hits = Arc::new(AtomicUsize::new(0));
        let api = Arc::new(Api {
            port: listener.local_addr().expect("addr").port(),
            other_port: other.local_addr().expect("addr").port(),
            other_hits: other_hits.clone(),
            ..Api::default()
        });
        let served = api.clone();
        let app = axum::Router::new().fallback(move |request: Request| {
            let api = served.clone();
            async move { api.handle(request).await }
        });
        runtime.spawn(async move { axum::serve(listener, app).await });
        let other_app = axum::Router::new().fallback(move |_: Request| {
            other_hits.fetch_add(1, Ordering::SeqCst);
            async { json_response(StatusCode::OK, json!([])) }
        });
        runtime.spawn(async move { axum::serve(other, other_app).await });
        Server {
            api,
            _runtime: runtime,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.api.port)
    }
}

/// An execution runtime and the service over the two documents.
struct Harness {
    runtime: tokio::runtime::Runtime,
    service: CodeMode,
}

fn harness(server: &Server, config: Config, tables: Vec<OpenApiConfig>) -> Harness {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let env = |var: &str| (var == "STORE_TOKEN").then(|| TOKEN.to_string());
    let sources = collect_openapi(&tables, &[], &env).expect("valid sources");
    let imported = runtime
        .block_on(load_openapi(&sources, config.limits.max_value_bytes, []))
        .expect("imported");
    let mut parts = catalog_sources(&[], &[]).expect("no native sources");
    parts
        .capabilities
        .extend(imported.into_iter().map(|i| i.capability));
    let catalog = parts.build_with([]).expect("catalog");
    let _ = server;
    Harness {
        runtime,
        service: CodeMode::with_config(catalog, parts.policy, config),
    }
}

/// The two documents fetched from the test server; with headers, each
/// table names its `base_url` (a fetched document does not choose where
/// the headers go).
fn tables(server: &Server) -> Vec<OpenApiConfig> {
    vec![
        OpenApiConfig {
            name: "pets".into(),
            spec: server.url("/openapi.json"),
            base_url: Some(server.url("/api")),
            headers: [("X-Api-Version".to_string(), "2024-01-01".to_string())].into(),
            ..OpenApiConfig::default()
        },
        OpenApiConfig {
            name: "store".into(),
            spec: server.url("/openapi.yaml"),
            base_url: Some(server.url("/store")),
            headers: [(
                "Authorization".to_string(),
                "Bearer ${STORE_TOKEN}".to_string(),
            )]
            .into(),
            ..OpenApiConfig::default()
        },
    ]
}

impl Harness {
    fn run(&self, program: &str) -> Result<Value, String> {
        self.run_with(program, CancellationToken::new())
    }

    fn run_with(&self, program: &str, token: CancellationToken) -> Result<Value, String> {
        let subject = Subject::new("tester");
        self.runtime
            .block_on(
                self.service
                    .execute(&subject, program, ExecuteOptions::cancelled_by(token)),
            )
            .map(|d| serde_json::to_value(d).expect("JSON"))
            .map_err(|e| e.to_string())
    }

    fn describe(&self, name: &str) -> Value {
        let subject = Subject::new("tester");
        let d = self
            .runtime
            .block_on(self.service.describe(&subject, name))
            .expect("described");
        serde_json::to_value(d).expect("JSON")
    }
}

fn setup() -> (Server, Harness) {
    let server = Server::start();
    let h = harness(&server, Config::default(), tables(&server));
    (server, h)
}

#[test]
fn crud_over_the_31_json_document() {
    let (_server, h) = setup();
    let created = h
        .run(
            r#"
def main():
    a = pets.pets.create(name = "Rex", tag = "dog")
    b = pets.pets.create(name = "Tom", tag = "cat")
    c = pets.pets.create(name = "Kit")
    return {"a": a, "b": b, "c": c}
"#,
        )
        .expect("created");
    assert_eq!(
        created,
        json!({"a": {"id": 1, "name": "Rex", "tag": "dog"},
               "b": {"id": 2, "name": "Tom", "tag": "cat"},
               "c": {"id": 3, "name": "Kit", "tag": null}})
    );
    let read = h
        .run(
            r#"
def main():
    return {
        "all": [p["name"] for p in pets.list_pets()["items"]],
        "cats_and_dogs": [p["id"] for p in pets.list_pets(tag = ["cat", "dog"])["items"]],
        "first": pets.list_pets(limit = 1, x_request_id = "r-1")["items"],
        "one": pets.pets.get(pet_id = 2),
        "count": pets.count(),
        "readme": pets.readme(),
    }
"#,
        )
        .expect("read");
    assert_eq!(
        read,
        json!({
            "all": ["Rex", "Tom", "Kit"],
            "cats_and_dogs": [1, 2],
            "first": [{"id": 1, "name": "Rex", "tag": "dog"}],
            "one": {"id": 2, "name": "Tom", "tag": "cat"},
            "count": {"value": 3},
            "readme": {"text": "Pets API\nversion 1"},
        })
    );
    let changed = h
        .run(
            r#"
def main():
    u = pets.pets.update(pet_id = 1, body_pet_id = 1, name = "Rex II", tag = None)
    d = pets.pets.delete(pet_id = 3)
    return {"updated": u, "deleted": d, "left": pets.count()["value"]}
"#,
        )
        .expect("changed");
    assert_eq!(
        changed,
        json!({"updated": {"id": 1, "name": "Rex II", "tag": null}, "deleted": {}, "left": 2})
    );
    assert_eq!(
        h.run("def main():\n    return pets.pets.get(pet_id = 3)\n"),
        Err("capability failed: HTTP 404: pet 3 not found".into())
    );
    assert_eq!(
        h.run("def main():\n    return pets.pets.create(name = \"Tom\")\n"),
        Err("capability failed: HTTP 409: a pet named \"Tom\" exists".into())
    );
    assert_eq!(
        h.run(
            "def main():\n    return pets.pets.update(pet_id = 1, body_pet_id = 2, name = \"x\")\n"
        ),
        Err("capability failed: HTTP 422: the body's pet_id is not the path's".into())
    );
    // Input rules from the schemas bind before any request.
    assert_eq!(
        h.run("def main():\n    return pets.pets.get(pet_id = 0)\n"),
        Err("invalid capability arguments: pet_id: must be at least 1".into())
    );
    assert_eq!(
        h.run("def main():\n    return pets.pets.create(name = \"\")\n"),
        Err("invalid capability arguments: name: length must be at least 1".into())
    );
}

#[test]
fn parameters_are_written_as_the_document_says() {
    let (_server, h) = setup();
    let echoed = h
        .run(
            r#"
def main():
    return pets.echo(segment = "../../admin?x=1#y", q = "a b&c=d", ids = [1, 2, 3],
                     filter = {"state": "open"}, x_trace = "t-1", x_api_version = "1999")
"#,
        )
        .expect("echoed");
    assert_eq!(
        echoed,
        json!({
            "path": "echo/..%2F..%2Fadmin%3Fx%3D1%23y",
            "query": "q=a+b%26c%3Dd&ids=1%2C2%2C3&filter%5Bstate%5D=open",
            "trace": "t-1",
            // The configured header wins over the argument.
            "api_version": "2024-01-01",
            "authorization": null,
            // The media type the output is read from.
            "accept": "application/json",
        })
    );
    // A segment cannot be a dot segment.
    assert_eq!(
        h.run("def main():\n    return pets.echo(segment = \"..\")\n"),
        Err("capability failed: path parameter segment cannot be \"..\"".into())
    );
    // Authorization is no argument, whatever the document declares.
    assert_eq!(
        h.run("def main():\n    return pets.echo(segment = \"s\", authorization = \"Bearer x\")\n"),
        Err("invalid capability arguments: authorization: unknown argument".into())
    );
    let d = h.describe("pets.echo");
    assert_eq!(
        d["signature"],
        "pets.echo(*, segment: str, q: str | None, ids: list[int] | None, filter: {state?: str} | None, x_trace: str | None, x_api_version: str | None)"
    );
}

#[test]
fn the_30_yaml_document_imports_and_calls() {
    let (server, h) = setup();
    let d = h.describe("store.get_orders_order_id");
    assert_eq!(d["summary"], "Find an order by its ID.");
    assert_eq!(
        d["signature"],
        "store.get_orders_order_id(*, order_id: int)"
    );
    let place = h.describe("store.place_order");
    assert_eq!(
        place["signature"],
        "store.place_order(*, item: str, quantity: int, note: str | None)"
    );
    let out = h
        .run(
            r#"
def main():
    a = store.place_order(item = "apple", quantity = 3)
    b = store.place_order(item = "pear", quantity = 10, note = "ripe")
    got = store.get_orders_order_id(order_id = a["id"])
    gone = store.cancel_order(order_id = a["id"])
    return {"a": a, "b": b, "got": got, "gone": gone, "left": store.list_orders()["items"],
            "summary": store.get_summary(), "via_redirect": store.old_orders()["items"],
            "note": store.add_note(body = "buy milk")}
"#,
        )
        .expect("ran");
    assert_eq!(
        out,
        json!({
            "a": {"id": 100, "item": "apple", "quantity": 3, "note": null},
            "b": {"id": 101, "item": "pear", "quantity": 10, "note": "ripe"},
            "got": {"id": 100, "item": "apple", "quantity": 3, "note": null},
            "gone": {},
            "left": [{"id": 101, "item": "pear", "quantity": 10, "note": "ripe"}],
            "summary": {"total": 1},
            "via_redirect": [{"id": 101, "item": "pear", "quantity": 10, "note": "ripe"}],
            "note": {"text": "stored: buy milk"},
        })
    );
    assert_eq!(
        h.run("def main():\n    return store.place_order(item = \"plum\", quantity = 1)\n"),
        Err("invalid capability arguments: item: must be one of \"apple\", \"pear\"".into())
    );
    assert_eq!(
        h.run("def main():\n    return store.place_order(item = \"pear\", quantity = 11)\n"),
        Err("invalid capability arguments: quantity: must be at most 10".into())
    );
    assert_eq!(
        h.run("def main():\n    return store.get_orders_order_id(order_id = 7)\n"),
        Err("capability failed: HTTP 404: order 7 does not exist see the docs".into())
    );
    // A redirect to another origin is not followed.
    assert_eq!(
        h.run("def main():\n    return store.moved_away()\n"),
        Err("capability failed: HTTP 302".into())
    );
    assert_eq!(server.api.other_hits.load(Ordering::SeqCst), 0);
}

#[test]
fn the_token_comes_from_the_configuration_only() {
    let server = Server::start();
    let mut t = tables(&server);
    t[1].headers.clear();
    let h = harness(&server, Config::default(), t);
    assert_eq!(
        h.run("def main():\n    return store.get_summary()\n"),
        Err("capability failed: HTTP 401: token rejected".into())
    );
    assert_eq!(
        h.run(
            "def main():\n    return store.get_summary(authorization = \"Bearer s3cret-token\")\n"
        ),
        Err("invalid capability arguments: authorization: unknown argument".into())
    );
    // A missing variable is a start-up error naming it.
    let mut t = tables(&server);
    t[1].headers = [("X-Key".to_string(), "${NOT_SET_ANYWHERE}".to_string())].into();
    let e = collect_openapi(&t, &[], &|_| None).map(|_| ());
    assert_eq!(
        e.map_err(|e| e.to_string()),
        Err("openapi \"store\": environment variable NOT_SET_ANYWHERE is not set".into())
    );
}

#[test]
fn slow_calls_end_at_the_deadline_and_on_cancellation() {
    let server = Server::start();
    let mut config = Config::default();
    config.limits.max_time = Duration::from_millis(400);
    let h = harness(&server, config, tables(&server));
    let started = Instant::now();
    assert_eq!(
        h.run("def main():\n    return store.slow_op()\n"),
        Err("resource limit exceeded".into())
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    let (long_server, long) = setup();
    let token = CancellationToken::new();
    let cancel = token.clone();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(150));
        cancel.cancel();
    });
    let started = Instant::now();
    assert_eq!(
        long.run_with("def main():\n    return store.slow_op()\n", token),
        Err("context canceled".into())
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    canceller.join().expect("canceller");
    // Both servers saw their request given up (the connection closed).
    for api in [&server.api, &long_server.api] {
        let deadline = Instant::now() + Duration::from_secs(5);
        while api.slow_dropped.load(Ordering::SeqCst) < 1 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(api.slow_started.load(Ordering::SeqCst), 1);
        assert_eq!(api.slow_dropped.load(Ordering::SeqCst), 1);
    }
}

#[test]
fn answers_beyond_max_value_bytes_are_refused() {
    let server = Server::start();
    let mut config = Config::default();
    config.limits.max_value_bytes = 4096;
    let h = harness(&server, config, tables(&server));
    assert_eq!(
        h.run("def main():\n    return store.big_list()\n"),
        Err("resource limit exceeded".into())
    );
    assert_eq!(
        h.run("def main():\n    return len(store.list_orders()[\"items\"])\n"),
        Ok(json!(0))
    );
}

#[test]
fn calls_speak_http2_when_configured() {
    let server = Server::start();
    let mut t = tables(&server);
    let program = "def main():\n    return pets.count()\n";
    let h = harness(&server, Config::default(), t.clone());
    let plain = h.run(program).expect("counted");
    t[0].http = HttpVersion::Http2;
    let h = harness(&server, Config::default(), t);
    let many = "def main():\n    return [pets.count() for _ in range(3)]\n";
    assert_eq!(h.run(program), Ok(plain.clone()));
    assert_eq!(h.run(many), Ok(json!([plain, plain, plain])));
    use axum::http::Version;
    assert_eq!(
        *server.api.versions.lock().expect("versions"),
        [
            Version::HTTP_11,
            Version::HTTP_2,
            Version::HTTP_2,
            Version::HTTP_2,
            Version::HTTP_2
        ]
    );
}

#[test]
fn a_transport_failure_has_no_detail() {
    let server = Server::start();
    let mut t = tables(&server);
    // Nothing listens on the other server's port once it is closed: use a
    // port that was free a moment ago.
    let free = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = free.local_addr().expect("addr").port();
    drop(free);
    t[0].base_url = Some(format!("http://127.0.0.1:{port}/api"));
    let h = harness(&server, Config::default(), t);
    assert_eq!(
        h.run("def main():\n    return pets.count()\n"),
        Err("capability failed".into())
    );
}

fn codemode(args: &[&str], program: &str, env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let env: Vec<(&str, &OsStr)> = env.iter().map(|(k, v)| (*k, OsStr::new(*v))).collect();
    let out = common::run_codemode(args, program, &env);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_binary_imports_flags_and_tables() {
    let server = Server::start();
    let spec = server.url("/openapi.json");
    let flag = format!("pets={spec}");
    let (code, out, err) = codemode(
        &["run", "--openapi", &flag, "-"],
        "def main():\n    return pets.pets.create(name = \"Ada\")\n",
        &[],
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim(), r#"{"result":{"id":1,"name":"Ada","tag":null}}"#);
    let (code, out, _) = codemode(&["search", "--openapi", &flag, "list pets"], "", &[]);
    assert_eq!(code, Some(0));
    let found: Value = serde_json::from_str(out.trim()).expect("JSON");
    assert_eq!(found["results"][0]["name"], "pets.list_pets");
    // A table: the spec relative to the file, the token from the
    // environment, never logged.
    let dir = std::env::temp_dir().join(format!("codemode-openapi-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("specs")).expect("dir");
    let yaml = STORE.replace("127.0.0.1:PORT", &format!("127.0.0.1:{}", server.api.port));
    std::fs::write(dir.join("specs/store.yaml"), yaml).expect("spec");
    let config = dir.join("codemode.toml");
    std::fs::write(
        &config,
        "catalogs = []\ndisabled = [\"openapi.store.slowOp\"]\n[[openapi]]\nname = \"store\"\nspec = \"specs/store.yaml\"\nheaders = { Authorization = \"Bearer ${STORE_TOKEN}\" }\nexclude = [\"big*\"]\n",
    )
    .expect("config");
    let config = config.to_string_lossy().into_owned();
    let (code, out, err) = codemode(
        &["run", "--config", &config, "-"],
        "def main():\n    return store.get_summary()\n",
        &[("STORE_TOKEN", TOKEN), ("RUST_LOG", "trace")],
    );
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim(), r#"{"result":{"total":0}}"#);
    assert!(!err.contains(TOKEN), "the token was logged");
    for gone in ["store.big_list", "store.slow_op"] {
        let (code, _, err) = codemode(
            &["describe", "--config", &config, gone],
            "",
            &[("STORE_TOKEN", "x")],
        );
        assert_eq!(
            (code, err.trim()),
            (Some(1), "capability not found"),
            "{gone}"
        );
    }
    let (code, _, err) = codemode(
        &["describe", "--config", &config, "store.list_orders"],
        "",
        &[],
    );
    assert_eq!(code, Some(2));
    assert_eq!(
        err.trim(),
        "codemode: openapi \"store\": environment variable STORE_TOKEN is not set"
    );
    // Documents that cannot be imported name the file and the place.
    let swagger = dir.join("old.json");
    std::fs::write(&swagger, r#"{"swagger": "2.0", "paths": {}}"#).expect("write");
    let flag = format!("old={}", swagger.display());
    let (code, _, err) = codemode(&["search", "--openapi", &flag, "x"], "", &[]);
    assert_eq!(code, Some(2));
    assert_eq!(
        err.trim(),
        format!(
            "codemode: openapi \"old\": {}: /swagger: Swagger 2.0 is not supported; convert the document to OpenAPI 3",
            swagger.display()
        )
    );
    let external = dir.join("ext.yaml");
    std::fs::write(
        &external,
        "openapi: 3.1.0\nservers: [{url: 'http://h'}]\npaths:\n  /a:\n    get:\n      responses:\n        '200':\n          $ref: 'other.yaml#/R'\n",
    )
    .expect("write");
    let flag = format!("ext={}", external.display());
    let (code, _, err) = codemode(&["search", "--openapi", &flag, "x"], "", &[]);
    assert_eq!(code, Some(2));
    assert_eq!(
        err.trim(),
        format!(
            "codemode: openapi \"ext\": {}: /paths/~1a/get/responses/200/$ref: external reference \"other.yaml#/R\" is not supported (only #/... references are)",
            external.display()
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn operation_ids_cannot_forge_log_lines() {
    let dir = std::env::temp_dir().join(format!("codemode-openapi-ids-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let spec = dir.join("forged.json");
    let forged = "a\n2026-01-01T00:00:00Z  WARN forged: admin logged in\u{1b}[2J";
    let doc = json!({
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "http://127.0.0.1:1"}],
        "paths": {
            "/a": {"get": {"operationId": forged, "responses": {"200": {"description": "ok"}}}},
            "/b": {"get": {"operationId": "fine", "responses": {"200": {"description": "ok"}}}}
        }
    });
    std::fs::write(&spec, doc.to_string()).expect("spec");
    let flag = format!("p={}", spec.to_str().expect("utf-8"));
    let (code, _, err) = codemode(&["search", "--openapi", &flag, "fine"], "", &[]);
    assert_eq!(code, Some(0), "{err}");
    assert!(err.contains("operation left out"), "{err}");
    assert!(!err.contains('\u{1b}'), "{err:?}");
    assert!(
        !err.lines().any(|l| l.starts_with("2026-01-01T00:00:00Z")),
        "{err}"
    );
    assert!(err.contains("a\\n2026-01-01T00:00:00Z"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
