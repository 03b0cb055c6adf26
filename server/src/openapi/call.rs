//! Calling an operation over HTTP.
//!
//! An [`ApiClient`] is one imported document's connection to its API: one
//! reqwest client (so one connection pool) per source, no automatic
//! retries, redirects followed only within the same origin (another
//! origin's redirect is the 3xx answer itself), the configured headers and
//! the byte bound of a response body. A [`Call`] is one operation's plan:
//! which argument goes where under which original name. [`Call::run`]
//! writes the request — path parameters percent-encoded as one segment
//! (`.` and `..` refused, so no value adds segments or leaves the path),
//! query values by their style (form, exploded arrays by default), header
//! parameters unless a configured header has the name, `Accept` the media
//! type the output is read from — sends it, reads at
//! most `max_value_bytes` of the answer (beyond: `resource limit
//! exceeded`) and turns it into the output: a 2xx answer conformed to the
//! output shape, any other `capability failed: HTTP <status>` with the
//! message the body carries. The execution's deadline and cancellation
//! drop the future, which aborts the request.

use super::config::HttpVersion;
use super::operation::{is_json, Location, Parameter, Style};
use crate::logging::redact_urls;
use crate::upstream::import::{conform_json, cut};
use codemode_catalog::FieldShape;
use codemode_catalog::HandlerError;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, CONTENT_TYPE};
use reqwest::{Method, StatusCode};
use serde_json::{Map, Value};

/// Everything but RFC 3986's unreserved characters is escaped in a path
/// segment (so `/`, `?`, `#` and `%` cannot change the path).
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The most redirects followed within one origin.
pub const MAX_REDIRECTS: usize = 10;
/// The longest message taken from an error answer's body, in bytes.
const MAX_MESSAGE_BYTES: usize = 256;

/// One source's HTTP client: the reqwest client, base URL, headers and
/// body bound.
pub struct ApiClient {
    client: reqwest::Client,
    base: String,
    headers: HeaderMap,
    max_body_bytes: usize,
}

impl ApiClient {
    /// A client calling `base` (its trailing `/` dropped) with `headers`
    /// over `http`; bodies longer than `max_body_bytes` are refused.
    pub fn new(
        base: &str,
        headers: HeaderMap,
        max_body_bytes: usize,
        http: HttpVersion,
    ) -> Result<ApiClient, reqwest::Error> {
        let policy = reqwest::redirect::Policy::custom(|attempt| {
            let same = attempt
                .previous()
                .first()
                .is_some_and(|first| first.origin() == attempt.url().origin());
            if same && attempt.previous().len() <= MAX_REDIRECTS {
                attempt.follow()
            } else {
                attempt.stop()
            }
        });
        let mut client = reqwest::Client::builder()
            .redirect(policy)
            .retry(reqwest::retry::never());
        client = match http {
            HttpVersion::Auto => client,
            HttpVersion::Http1 => client.http1_only(),
            HttpVersion::Http2 => client.http2_prior_knowledge(),
        };
        let client = client.build()?;
        Ok(ApiClient {
            client,
            base: base.trim_end_matches('/').to_string(),
            headers,
            max_body_bytes,
        })
    }
}

/// How the request body is written.
#[derive(Debug)]
pub enum BodyPlan {
    /// No body.
    None,
    /// A JSON object from these (argument, property) pairs.
    Properties {
        media: String,
        fields: Vec<(String, String)>,
    },
    /// The argument `arg` as the whole body.
    Whole { media: String, arg: String },
}

/// How the answer becomes the output.
#[derive(Debug)]
pub enum OutputPlan {
    /// The JSON answer as is.
    Object,
    /// `{items: <the JSON array>}`.
    Items,
    /// `{value: <the JSON value>}`.
    Value,
    /// `{}`.
    Empty,
    /// `{text: <the body>}`.
    Text,
}

/// One operation's plan.
#[derive(Debug)]
pub struct Call {
    /// The method.
    pub method: Method,
    /// The path template.
    pub path: String,
    /// Each parameter with its argument name.
    pub parameters: Vec<(String, Parameter)>,
    /// The body.
    pub body: BodyPlan,
    /// The output.
    pub output: OutputPlan,
    /// The output's fields, for conforming.
    pub fields: Vec<FieldShape>,
    /// The `Accept` header: the media type of the answer the output is
    /// made from.
    pub accept: Option<HeaderValue>,
}

fn public(message: impl Into<String>) -> HandlerError {
    HandlerError::public(message)
}

impl Call {
    /// Calls the operation with the canonical `arguments`.
    pub async fn run(&self, client: &ApiClient, arguments: Value) -> Result<Value, HandlerError> {
        let request = self.request(client, arguments)?;
        let mut response = client.client.execute(request).await.map_err(|e| {
            HandlerError::internal(redact_urls(&format!("HTTP request failed: {e}")))
        })?;
        let status = response.status();
        let json_answer = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(|m| {
                (
                    is_json(m),
                    m.trim_start().starts_with("text/") && !m.contains("html"),
                )
            });
        if response
            .content_length()
            .is_some_and(|n| n > client.max_body_bytes as u64)
        {
            return Err(HandlerError::resource_limit(
                "the response body is too long",
            ));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| {
            HandlerError::internal(redact_urls(&format!("reading the response failed: {e}")))
        })? {
            if body.len() + chunk.len() > client.max_body_bytes {
                return Err(HandlerError::resource_limit(
                    "the response body is too long",
                ));
            }
            body.extend_from_slice(&chunk);
        }
        if !status.is_success() {
            let (json, text) = json_answer.unwrap_or((false, false));
            return Err(public(failure(status, &body, json, text)));
        }
        self.output(&body)
    }

    fn output(&self, body: &[u8]) -> Result<Value, HandlerError> {
        let parse = || {
            serde_json::from_slice::<Value>(body)
                .map_err(|_| HandlerError::internal("the response is not JSON"))
        };
        let value = match self.output {
            OutputPlan::Empty => return Ok(Value::Object(Map::new())),
            OutputPlan::Text => {
                let text = String::from_utf8_lossy(body).into_owned();
                return Ok(serde_json::json!({ "text": text }));
            }
            OutputPlan::Object => parse()?,
            OutputPlan::Items => serde_json::json!({ "items": parse()? }),
            OutputPlan::Value => serde_json::json!({ "value": parse()? }),
        };
        conform_json(&self.fields, &value)
    }

    /// The request for `arguments`.
    fn request(
        &self,
        client: &ApiClient,
        arguments: Value,
    ) -> Result<reqwest::Request, HandlerError> {
        let mut args = match arguments {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let mut path = String::with_capacity(client.base.len() + self.path.len() + 16);
        path.push_str(&client.base);
        let mut rest = self.path.as_str();
        while let Some(open) = rest.find('{') {
            let Some(len) = rest[open..].find('}') else {
                break;
            };
            path.push_str(&rest[..open]);
            let name = &rest[open + 1..open + len];
            let value = self
                .parameters
                .iter()
                .find(|(_, p)| p.location == Location::Path && p.name == name)
                .and_then(|(arg, _)| args.get(arg))
                .ok_or_else(|| public(format!("path parameter {name} is missing")))?;
            let text = simple(value);
            if text == "." || text == ".." {
                return Err(public(format!("path parameter {name} cannot be {text:?}")));
            }
            path.extend(utf8_percent_encode(&text, SEGMENT));
            rest = &rest[open + len + 1..];
        }
        path.push_str(rest);
        let mut url = url::Url::parse(&path)
            .map_err(|e| HandlerError::internal(format!("invalid URL: {e}")))?;
        let mut headers = HeaderMap::new();
        {
            let mut pairs: Vec<(String, String)> = Vec::new();
            for (arg, p) in &self.parameters {
                let Some(value) = args.get(arg) else { continue };
                match p.location {
                    Location::Path => {}
                    Location::Query => query_pairs(p, value, &mut pairs),
                    Location::Header => {
                        let name = HeaderName::from_bytes(p.name.as_bytes())
                            .map_err(|_| HandlerError::internal("invalid header name"))?;
                        if client.headers.contains_key(&name) {
                            continue;
                        }
                        let value = HeaderValue::from_str(&simple(value)).map_err(|_| {
                            public(format!("header parameter {} has an invalid value", p.name))
                        })?;
                        headers.insert(name, value);
                    }
                }
            }
            if !pairs.is_empty() {
                let mut query = url.query_pairs_mut();
                for (k, v) in &pairs {
                    query.append_pair(k, v);
                }
            }
        }
        if let Some(accept) = &self.accept {
            headers.insert(ACCEPT, accept.clone());
        }
        for (name, value) in &client.headers {
            headers.insert(name.clone(), value.clone());
        }
        let body = match &self.body {
            BodyPlan::None => None,
            BodyPlan::Properties { media, fields } => {
                let mut object = Map::new();
                for (arg, property) in fields {
                    if let Some(v) = args.remove(arg) {
                        object.insert(property.clone(), v);
                    }
                }
                Some((media, serde_json::to_vec(&Value::Object(object))?))
            }
            BodyPlan::Whole { media, arg } => match args.remove(arg) {
                None => None,
                Some(v) => Some((media, encode_body(media, v)?)),
            },
        };
        let mut request = reqwest::Request::new(self.method.clone(), url);
        if let Some((media, bytes)) = body {
            let media = HeaderValue::from_str(media)
                .map_err(|_| HandlerError::internal("invalid media type"))?;
            headers.insert(CONTENT_TYPE, media);
            *request.body_mut() = Some(bytes.into());
        }
        *request.headers_mut() = headers;
        Ok(request)
    }
}

fn encode_body(media: &str, value: Value) -> Result<Vec<u8>, HandlerError> {
    if is_json(media) {
        return Ok(serde_json::to_vec(&value)?);
    }
    if media.eq_ignore_ascii_case("application/x-www-form-urlencoded") {
        let Value::Object(map) = value else {
            return Err(public("body must be a dict"));
        };
        let mut form = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in &map {
            form.append_pair(k, &simple(v));
        }
        return Ok(form.finish().into_bytes());
    }
    match value {
        Value::String(s) => Ok(s.into_bytes()),
        _ => Err(public("body must be a str")),
    }
}

/// A scalar as text (`true`, `3`, `2.5`, the string itself).
fn scalar(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The `simple` style: arrays and objects comma-separated.
fn simple(value: &Value) -> String {
    match value {
        Value::Array(items) => items.iter().map(scalar).collect::<Vec<_>>().join(","),
        Value::Object(map) => map
            .iter()
            .flat_map(|(k, v)| [k.clone(), scalar(v)])
            .collect::<Vec<_>>()
            .join(","),
        v => scalar(v),
    }
}

/// The query pairs of one parameter by its style.
fn query_pairs(p: &Parameter, value: &Value, out: &mut Vec<(String, String)>) {
    let name = &p.name;
    match value {
        Value::Array(items) => {
            let sep = match p.style {
                Style::SpaceDelimited => " ",
                Style::PipeDelimited => "|",
                _ => ",",
            };
            if p.explode {
                out.extend(items.iter().map(|v| (name.clone(), scalar(v))));
            } else {
                let joined: Vec<String> = items.iter().map(scalar).collect();
                out.push((name.clone(), joined.join(sep)));
            }
        }
        Value::Object(map) => match p.style {
            Style::DeepObject => {
                out.extend(map.iter().map(|(k, v)| (format!("{name}[{k}]"), scalar(v))));
            }
            _ if p.explode => out.extend(map.iter().map(|(k, v)| (k.clone(), scalar(v)))),
            _ => out.push((name.clone(), simple(value))),
        },
        v => out.push((name.clone(), scalar(v))),
    }
}

/// `HTTP <status>`, and `: <message>` when the body carries one: a JSON
/// `message`, `error` or `detail` string, or the start of a text body,
/// without control characters.
fn failure(status: StatusCode, body: &[u8], json: bool, text: bool) -> String {
    let mut out = format!("HTTP {}", status.as_u16());
    let message = if json {
        serde_json::from_slice::<Value>(body).ok().and_then(|v| {
            ["message", "error", "detail"]
                .iter()
                .find_map(|k| v.get(k).and_then(Value::as_str).map(str::to_string))
        })
    } else if text {
        let start = &body[..body.len().min(4 * MAX_MESSAGE_BYTES)];
        Some(String::from_utf8_lossy(start).into_owned())
    } else {
        None
    };
    if let Some(m) = message {
        // Whitespace runs become one space; other control characters (an
        // ESC that would drive a terminal, a NUL) are dropped.
        let m = m.split_whitespace().collect::<Vec<_>>().join(" ");
        let m: String = m.chars().filter(|c| !c.is_control()).collect();
        if !m.is_empty() {
            out.push_str(": ");
            out.push_str(&m);
        }
    }
    cut(&out, MAX_MESSAGE_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn param(name: &str, location: Location, style: Style, explode: bool) -> Parameter {
        Parameter {
            name: name.into(),
            location,
            required: false,
            schema: json!({}),
            style,
            explode,
        }
    }

    fn call(parameters: Vec<(String, Parameter)>) -> Call {
        Call {
            method: Method::GET,
            path: "/repos/{owner}/{repo}".into(),
            parameters,
            body: BodyPlan::None,
            output: OutputPlan::Empty,
            fields: Vec::new(),
            accept: None,
        }
    }

    fn client(headers: HeaderMap) -> ApiClient {
        ApiClient::new("http://api.test/v1/", headers, 1024, HttpVersion::Auto).expect("client")
    }

    #[test]
    fn path_parameters_stay_one_segment() {
        let c = call(vec![
            (
                "owner".into(),
                param("owner", Location::Path, Style::Simple, false),
            ),
            (
                "repo".into(),
                param("repo", Location::Path, Style::Simple, false),
            ),
        ]);
        let r = c
            .request(
                &client(HeaderMap::new()),
                json!({"owner": "../../admin", "repo": "a b/c?d#e%f"}),
            )
            .expect("request");
        assert_eq!(
            r.url().as_str(),
            "http://api.test/v1/repos/..%2F..%2Fadmin/a%20b%2Fc%3Fd%23e%25f"
        );
        for dots in [".", ".."] {
            let e = c
                .request(
                    &client(HeaderMap::new()),
                    json!({"owner": dots, "repo": "x"}),
                )
                .expect_err("refused");
            assert_eq!(
                e.public_message(),
                Some(format!("path parameter owner cannot be {dots:?}").as_str())
            );
        }
    }

    #[test]
    fn query_values_follow_their_style() {
        let mut c = call(vec![
            (
                "owner".into(),
                param("owner", Location::Path, Style::Simple, false),
            ),
            (
                "repo".into(),
                param("repo", Location::Path, Style::Simple, false),
            ),
            (
                "tags".into(),
                param("tags", Location::Query, Style::Form, true),
            ),
            (
                "ids".into(),
                param("ids", Location::Query, Style::Form, false),
            ),
            (
                "pipes".into(),
                param("p", Location::Query, Style::PipeDelimited, false),
            ),
            (
                "filter".into(),
                param("filter", Location::Query, Style::DeepObject, true),
            ),
            (
                "per_page".into(),
                param("per-page", Location::Query, Style::Form, true),
            ),
        ]);
        c.path = "/x/{owner}/{repo}".into();
        let r = c
            .request(
                &client(HeaderMap::new()),
                json!({"owner": "o", "repo": "r", "tags": ["a", "b c"], "ids": [1, 2], "pipes": ["x", "y"],
                       "filter": {"state": "open"}, "per_page": 5}),
            )
            .expect("request");
        assert_eq!(
            r.url().query(),
            Some("tags=a&tags=b+c&ids=1%2C2&p=x%7Cy&filter%5Bstate%5D=open&per-page=5")
        );
    }

    #[test]
    fn configured_headers_win() {
        let mut configured = HeaderMap::new();
        configured.insert("x-api-version", HeaderValue::from_static("2022"));
        let mut c = call(vec![
            (
                "x_api_version".into(),
                param("X-Api-Version", Location::Header, Style::Simple, false),
            ),
            (
                "x_trace".into(),
                param("X-Trace", Location::Header, Style::Simple, false),
            ),
        ]);
        c.path = "/h".into();
        let r = c
            .request(
                &client(configured),
                json!({"x_api_version": "1999", "x_trace": "t1"}),
            )
            .expect("request");
        assert_eq!(r.headers()["x-api-version"], "2022");
        assert_eq!(r.headers()["x-trace"], "t1");
        let e = c
            .request(&client(HeaderMap::new()), json!({"x_trace": "a\nb"}))
            .expect_err("bad value");
        assert_eq!(
            e.public_message(),
            Some("header parameter X-Trace has an invalid value")
        );
    }

    #[test]
    fn failures_carry_the_message_capped() {
        let s = StatusCode::NOT_FOUND;
        assert_eq!(
            failure(
                s,
                br#"{"message": "Not  Found", "documentation_url": "x"}"#,
                true,
                false
            ),
            "HTTP 404: Not Found"
        );
        assert_eq!(
            failure(s, br#"{"detail": "gone"}"#, true, false),
            "HTTP 404: gone"
        );
        assert_eq!(
            failure(s, br#"{"error": {"x": 1}}"#, true, false),
            "HTTP 404"
        );
        assert_eq!(
            failure(s, b"no such\npet", false, true),
            "HTTP 404: no such pet"
        );
        assert_eq!(failure(s, b"<html>", false, false), "HTTP 404");
        assert_eq!(
            failure(
                s,
                b"{\"message\": \"bad\\u001b[31m red\\u0000\\r\\nforged\"}",
                true,
                false
            ),
            "HTTP 404: bad[31m red forged"
        );
        assert_eq!(
            failure(s, b"no\x1b]0;title\x07 such\x7f", false, true),
            "HTTP 404: no]0;title such"
        );
        let long = failure(s, "é".repeat(300).as_bytes(), false, true);
        assert!(
            long.len() <= 256 && long.starts_with("HTTP 404: é"),
            "{long}"
        );
    }

    #[tokio::test]
    async fn transport_failures_name_no_query_value() {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = closed.local_addr().expect("address").port();
        drop(closed);
        let client = ApiClient::new(
            &format!("http://127.0.0.1:{port}/v1"),
            HeaderMap::new(),
            1024,
            HttpVersion::Auto,
        )
        .expect("client");
        let c = call(vec![
            (
                "owner".into(),
                param("owner", Location::Path, Style::Simple, false),
            ),
            (
                "repo".into(),
                param("repo", Location::Path, Style::Simple, false),
            ),
            ("q".into(), param("q", Location::Query, Style::Form, true)),
        ]);
        let e = c
            .run(
                &client,
                json!({"owner": "o", "repo": "r", "q": "s3cret-query"}),
            )
            .await
            .expect_err("nobody listens");
        let detail = e.detail();
        assert!(detail.starts_with("HTTP request failed"), "{detail}");
        assert!(!detail.contains("s3cret-query"), "{detail}");
    }
}
