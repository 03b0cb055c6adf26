//! `deploy/` against the binary: every flag, config key, port, path and
//! probe the Containerfile and the Kubernetes manifests use exists, and the
//! sizes they state follow from the budgets of their configuration.

use clap::Parser;
use codemode_server::FileConfig;
use codemode_server::{Cli, Command};
use codemode_server::{HEALTHZ, READYZ};
use serde_yaml_ng::Value;
use std::path::{Path, PathBuf};

fn deploy(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../deploy")
        .join(path)
}

fn yaml(name: &str) -> Value {
    let text = std::fs::read_to_string(deploy(&format!("kubernetes/{name}"))).expect("read");
    serde_yaml_ng::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn text<'a>(value: &'a Value, path: &[&str]) -> &'a str {
    at(value, path)
        .as_str()
        .unwrap_or_else(|| panic!("{path:?} is not a string"))
}

fn at<'a>(value: &'a Value, path: &[&str]) -> &'a Value {
    path.iter()
        .fold(value, |v, key| match key.parse::<usize>() {
            Ok(i) => &v[i],
            Err(_) => &v[*key],
        })
}

/// The `--http` port and `--config` path of a `serve` command line.
fn serve_args(args: &[String]) -> (u16, PathBuf) {
    let argv = std::iter::once("codemode".to_string()).chain(args.iter().cloned());
    let cli = Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{args:?}: {e}"));
    let Command::Serve { common, http } = cli.command else {
        panic!("not serve: {args:?}");
    };
    let addr: std::net::SocketAddr = http.expect("--http").parse().expect("an address");
    (addr.port(), common.config.expect("--config"))
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_sequence()
        .expect("a list")
        .iter()
        .map(|v| v.as_str().expect("a string").to_string())
        .collect()
}

/// Bytes of a Kubernetes quantity with a binary suffix.
fn mebibytes(quantity: &str) -> u64 {
    let (n, unit) = quantity.split_at(quantity.len() - 2);
    assert_eq!(unit, "Mi", "{quantity}");
    n.parse::<u64>().expect("a number") << 20
}

#[test]
fn the_containerfile_runs_the_binary_as_configured() {
    let text = std::fs::read_to_string(deploy("Containerfile")).expect("read");
    let line = |prefix: &str| {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix}"))
            .trim_start_matches(prefix)
            .trim()
            .to_string()
    };
    let entry: Vec<String> = serde_json::from_str(&line("ENTRYPOINT")).expect("exec form");
    assert_eq!(entry, ["/usr/local/bin/codemode"]);
    assert!(text.contains("/out/codemode /usr/local/bin/codemode"));
    assert!(text.contains("--bin codemode"));
    let cmd: Vec<String> = serde_json::from_str(&line("CMD")).expect("exec form");
    let (port, config) = serve_args(&cmd);
    assert_eq!(line("EXPOSE"), port.to_string());
    assert_eq!(config, Path::new("/etc/codemode/codemode.toml"));
    // Not root at run time.
    let user = line("USER");
    assert!(
        !user.starts_with("0") && !user.starts_with("root"),
        "{user}"
    );
}

#[test]
fn the_manifests_use_what_the_binary_has() {
    let deployment = yaml("deployment.yaml");
    let spec = at(&deployment, &["spec", "template", "spec"]);
    let container = at(spec, &["containers", "0"]);
    let (port, config_path) = serve_args(&strings(&container["args"]));
    let ports = container["ports"].as_sequence().expect("ports");
    let container_port = |name: &str| {
        ports
            .iter()
            .find(|p| p["name"].as_str() == Some(name))
            .unwrap_or_else(|| panic!("no port {name}"))["containerPort"]
            .as_u64()
    };
    assert_eq!(ports.len(), 2);
    assert_eq!(container_port("http"), Some(port.into()));
    assert_eq!(
        text(container, &["livenessProbe", "httpGet", "path"]),
        HEALTHZ
    );
    assert_eq!(
        text(container, &["readinessProbe", "httpGet", "path"]),
        READYZ
    );
    for probe in ["livenessProbe", "readinessProbe"] {
        assert_eq!(text(container, &[probe, "httpGet", "port"]), "http");
    }
    let security = &container["securityContext"];
    assert_eq!(security["readOnlyRootFilesystem"].as_bool(), Some(true));
    assert_eq!(
        spec["securityContext"]["runAsNonRoot"].as_bool(),
        Some(true)
    );

    // The ConfigMap's TOML is mounted where --config points, and every
    // key in it is one the binary knows.
    let mounts = container["volumeMounts"].as_sequence().expect("mounts");
    let mount = |name: &str| {
        mounts
            .iter()
            .find(|m| m["name"].as_str() == Some(name))
            .unwrap_or_else(|| panic!("no mount {name}"))
    };
    assert_eq!(
        Path::new(text(mount("config"), &["mountPath"])),
        config_path
    );
    let key = text(mount("config"), &["subPath"]);
    let configmap = yaml("configmap.yaml");
    let volumes = spec["volumes"].as_sequence().expect("volumes");
    let volume = |name: &str| {
        volumes
            .iter()
            .find(|v| v["name"].as_str() == Some(name))
            .unwrap_or_else(|| panic!("no volume {name}"))
    };
    assert_eq!(
        text(volume("config"), &["configMap", "name"]),
        text(&configmap, &["metadata", "name"])
    );
    let toml = text(&configmap, &["data", key]);
    let file = FileConfig::from_toml(toml).unwrap_or_else(|e| panic!("configmap: {e}"));

    // The Secret holds the tokens file the TOML names, in its format.
    let secret = yaml("secret.yaml");
    assert_eq!(
        text(volume("tokens"), &["secret", "secretName"]),
        text(&secret, &["metadata", "name"])
    );
    let tokens_file = file.http.tokens_file.clone().expect("tokens_file");
    let tokens_dir = Path::new(text(mount("tokens"), &["mountPath"]));
    assert_eq!(tokens_file.parent(), Some(tokens_dir));
    let loaded = with_secret(toml, &tokens_file, &secret);
    assert!(!loaded.http.tokens.is_empty());
    codemode_server::HttpOptions::from_config(&loaded.http).expect("valid [http]");

    // Metrics on a port of their own, named in the pod's annotations for
    // Prometheus (which scrapes by pod IP, without a token: see
    // `the_shipped_metrics_port_answers_a_scrape_by_pod_ip`).
    let listen: std::net::SocketAddr = file
        .telemetry
        .listen
        .as_deref()
        .expect("[telemetry] listen")
        .parse()
        .expect("an address");
    assert!(
        listen.ip().is_unspecified(),
        "{listen}: not reachable by pod IP"
    );
    assert_eq!(container_port("metrics"), Some(listen.port().into()));
    assert_ne!(listen.port(), port);
    let annotations = at(
        &deployment,
        &["spec", "template", "metadata", "annotations"],
    );
    assert_eq!(text(annotations, &["prometheus.io/scrape"]), "true");
    assert_eq!(
        text(annotations, &["prometheus.io/port"]),
        listen.port().to_string()
    );
    assert_eq!(text(annotations, &["prometheus.io/path"]), "/metrics");
    assert_eq!(file.telemetry.listen_requires_token, Some(false));
    // Metrics without a token beyond loopback: said on purpose, so the
    // binary accepts the address.
    assert!(file.telemetry.allow_public_listen);
    let options = codemode_server::metrics_listener_options(&loaded.http, &loaded.telemetry)
        .expect("valid metrics listener");
    codemode_server::check_metrics_address(listen, &options, &loaded.telemetry)
        .expect("the metrics address is accepted");

    // Sizes from the budgets.
    let config = file.limits.to_config();
    let grace = at(spec, &["terminationGracePeriodSeconds"])
        .as_u64()
        .expect("grace");
    let drain_ms = file.http.drain_delay_ms.unwrap_or(0);
    let needed = drain_ms as u128
        + config.max_queue_wait.as_millis()
        + config.limits.max_time.as_millis()
        + 1000;
    assert!(
        u128::from(grace) * 1000 > needed,
        "{grace} s <= {needed} ms"
    );
    let limit = mebibytes(text(container, &["resources", "limits", "memory"]));
    // Open executions' heaps are bounded together.
    let programs = config.max_open_heap_bytes as u64;
    assert!(
        limit >= programs + (64 << 20),
        "{limit} < {programs} + 64 MiB"
    );

    // The Service, the PDB and the HPA select and scale this Deployment.
    let labels = at(&deployment, &["spec", "selector", "matchLabels"]);
    let service = yaml("service.yaml");
    assert_eq!(&service["spec"]["selector"], labels);
    assert_eq!(
        text(&service, &["spec", "ports", "0", "targetPort"]),
        "http"
    );
    let pdb = yaml("poddisruptionbudget.yaml");
    assert_eq!(&pdb["spec"]["selector"]["matchLabels"], labels);
    let hpa = yaml("horizontalpodautoscaler.yaml");
    // The HPA owns the replica count: a count in the Deployment would
    // reset it on every apply.
    assert!(
        deployment["spec"].get("replicas").is_none(),
        "the Deployment sets replicas beside the HPA"
    );
    assert!(hpa["spec"]["minReplicas"].as_u64().expect("minReplicas") >= 2);
    let name = text(&deployment, &["metadata", "name"]);
    assert_eq!(text(&hpa, &["spec", "scaleTargetRef", "name"]), name);
    assert_eq!(
        text(&hpa, &["spec", "scaleTargetRef", "kind"]),
        "Deployment"
    );
    let kustomization = yaml("kustomization.yaml");
    let resources = strings(&kustomization["resources"]);
    for resource in &resources {
        assert!(
            deploy(&format!("kubernetes/{resource}")).exists(),
            "{resource}"
        );
    }
    assert_eq!(resources.len(), 7);

    // The namespace the kustomization puts everything in is one of its
    // resources (a fresh cluster has none).
    let namespace = text(&kustomization, &["namespace"]);
    let created = resources
        .iter()
        .map(|r| yaml(r))
        .find(|r| r["kind"].as_str() == Some("Namespace"))
        .expect("a Namespace resource");
    assert_eq!(text(&created, &["metadata", "name"]), namespace);

    // The image is named by a tag that `images` sets, never `latest`.
    let image = text(container, &["image"]);
    let (image_name, image_tag) = image.rsplit_once(':').expect("a tagged image");
    let images = kustomization["images"].as_sequence().expect("images");
    let entry = images
        .iter()
        .find(|i| i["name"].as_str() == Some(image_name))
        .unwrap_or_else(|| panic!("no images entry for {image_name}"));
    let tag = text(entry, &["newTag"]);
    assert_eq!(tag, image_tag);
    assert_ne!(tag, "latest");
    assert_eq!(tag, env!("CARGO_PKG_VERSION"));
}

/// The placeholder digest of the shipped Secret, which the server refuses
/// until a deployer replaces it.
const PLACEHOLDER_DIGEST: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The ConfigMap's TOML as the pod loads it, with the Secret's tokens file
/// as a deployer fills it in: its placeholder digest replaced by a real one.
fn with_secret(toml: &str, tokens_file: &Path, secret: &Value) -> FileConfig {
    with_secret_as_shipped(toml, tokens_file, secret, true)
}

/// The ConfigMap's TOML with the Secret's tokens file, its placeholder
/// digest replaced when `fill_in`.
fn with_secret_as_shipped(
    toml: &str,
    tokens_file: &Path,
    secret: &Value,
    fill_in: bool,
) -> FileConfig {
    let tokens_key = tokens_file
        .file_name()
        .and_then(|n| n.to_str())
        .expect("name");
    let dir = std::env::temp_dir().join(format!(
        "codemode-deploy-{}-{:?}-{fill_in}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).expect("dir");
    let local = toml.replace(tokens_file.to_str().expect("utf-8"), "tokens.toml");
    std::fs::write(dir.join("codemode.toml"), local).expect("write");
    let tokens = text(secret, &["stringData", tokens_key]);
    assert!(tokens.contains(PLACEHOLDER_DIGEST), "{tokens}");
    let tokens = if fill_in {
        tokens.replace(
            PLACEHOLDER_DIGEST,
            &codemode_server::token_digest_hex("a-deployers-secret-token"),
        )
    } else {
        tokens.to_string()
    };
    std::fs::write(dir.join("tokens.toml"), tokens).expect("write");
    let loaded = FileConfig::read(&dir.join("codemode.toml")).expect("loads with its secret");
    let _ = std::fs::remove_dir_all(&dir);
    loaded
}

#[test]
fn the_shipped_placeholder_digest_is_refused_until_replaced() {
    let configmap = yaml("configmap.yaml");
    let toml = text(&configmap, &["data", "codemode.toml"]);
    let file = FileConfig::from_toml(toml).unwrap_or_else(|e| panic!("configmap: {e}"));
    let tokens_file = file.http.tokens_file.clone().expect("tokens_file");
    let secret = yaml("secret.yaml");
    let shipped = with_secret_as_shipped(toml, &tokens_file, &secret, false);
    let e = codemode_server::HttpOptions::from_config(&shipped.http)
        .err()
        .expect("the placeholder is refused");
    assert!(
        matches!(e, codemode_server::HttpConfigError::PlaceholderToken(_)),
        "{e}"
    );
    assert!(e.to_string().contains("all zeros"), "{e}");
    let filled = with_secret(toml, &tokens_file, &secret);
    codemode_server::HttpOptions::from_config(&filled.http).expect("a real digest serves");
}

/// The shipped configuration, loaded as the pod loads it.
fn shipped_config() -> FileConfig {
    let configmap = yaml("configmap.yaml");
    let toml = text(&configmap, &["data", "codemode.toml"]);
    let file = FileConfig::from_toml(toml).unwrap_or_else(|e| panic!("configmap: {e}"));
    let tokens_file = file.http.tokens_file.clone().expect("tokens_file");
    with_secret(toml, &tokens_file, &yaml("secret.yaml"))
}

async fn get(app: &axum::Router, path: &str, host: &str) -> axum::http::StatusCode {
    use tower::ServiceExt;
    let request = axum::http::Request::get(path)
        .header("host", host)
        .body(axum::body::Body::empty())
        .expect("request");
    app.clone()
        .oneshot(request)
        .await
        .expect("infallible")
        .status()
}

#[tokio::test]
async fn the_shipped_metrics_port_answers_a_scrape_by_pod_ip() {
    use axum::http::StatusCode;
    use codemode_server::{metrics_listener_options, metrics_router};
    let config = shipped_config();
    assert!(!config.http.tokens.is_empty());
    let options = metrics_listener_options(&config.http, &config.telemetry).expect("valid");
    let metrics = metrics_router(codemode_server::Metrics::new(), &options);
    // Prometheus by pod IP, IPv4 or IPv6, without a token.
    for host in ["10.244.1.17:9464", "[fd00:10:244::17]:9464"] {
        assert_eq!(
            get(&metrics, "/metrics", host).await,
            StatusCode::OK,
            "{host}"
        );
    }
    // A name that is not the Service's is still refused (DNS rebinding).
    assert_eq!(
        get(&metrics, "/metrics", "evil.example:9464").await,
        StatusCode::FORBIDDEN
    );
    // The --http port keeps its Host names and its tokens.
    let options = codemode_server::HttpOptions {
        metrics: Some(codemode_server::Metrics::new()),
        ..codemode_server::HttpOptions::from_config(&config.http).expect("valid")
    };
    let catalogs = codemode_server::load_catalogs(
        &["demo".to_string()],
        &[],
        codemode_catalog::Config::default(),
    )
    .expect("catalogs");
    let app = codemode_server::router(catalogs, &options);
    assert_eq!(
        get(&app, "/metrics", "codemode.codemode.svc:80").await,
        StatusCode::UNAUTHORIZED
    );
}

fn root(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

/// A Rust version (`1.95`, `1.89.0`) as `(major, minor, patch)`.
fn rust_version(text: &str) -> Option<(u64, u64, u64)> {
    let mut parts = text.trim().split('.').map(|p| p.parse::<u64>().ok());
    let major = parts.next()??;
    let minor = parts.next().unwrap_or(Some(0))?;
    let patch = parts.next().unwrap_or(Some(0))?;
    parts.next().is_none().then_some((major, minor, patch))
}

/// The highest `rust-version` declared by a crate of Cargo.lock, read from
/// the registry sources cargo unpacked (`$CARGO_HOME/registry/src/*/`),
/// with the crate that declares it.
fn lock_file_rust_version() -> ((u64, u64, u64), String) {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")))
        .expect("CARGO_HOME or HOME");
    let registries: Vec<PathBuf> = std::fs::read_dir(cargo_home.join("registry/src"))
        .map(|dir| dir.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    let lock: toml::Table = std::fs::read_to_string(root("Cargo.lock"))
        .expect("read Cargo.lock")
        .parse()
        .expect("Cargo.lock is TOML");
    let packages = lock["package"].as_array().expect("[[package]]");
    let mut found = 0;
    let mut highest = ((0, 0, 0), String::new());
    for package in packages {
        let (Some(name), Some(version)) = (package["name"].as_str(), package["version"].as_str())
        else {
            panic!("a package without name or version: {package:?}");
        };
        let Some(manifest) = registries
            .iter()
            .map(|r| r.join(format!("{name}-{version}/Cargo.toml")))
            .find(|m| m.exists())
        else {
            continue;
        };
        found += 1;
        let manifest: toml::Table = std::fs::read_to_string(&manifest)
            .expect("read")
            .parse()
            .unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
        let declared = manifest
            .get("package")
            .and_then(|p| p.get("rust-version"))
            .and_then(|v| v.as_str());
        if let Some(declared) = declared {
            let v = rust_version(declared)
                .unwrap_or_else(|| panic!("{name} {version}: rust-version {declared:?}"));
            if v > highest.0 {
                highest = (v, format!("{name} {version} (rust-version = {declared:?})"));
            }
        }
    }
    // Not vacuous: a crate not unpacked there (one for another platform)
    // is skipped, but a registry without any is no check at all.
    assert!(
        found > 0,
        "none of the {} crates of Cargo.lock is in {}",
        packages.len(),
        cargo_home.join("registry/src").display()
    );
    highest
}

#[test]
fn the_image_and_rust_version_build_every_crate_of_the_lock_file() {
    let (needed, by) = lock_file_rust_version();

    // The build stage's rust image tag (`rust:1.95-bookworm`).
    let containerfile = std::fs::read_to_string(deploy("Containerfile")).expect("read");
    let tags: Vec<&str> = containerfile
        .lines()
        .filter(|l| l.starts_with("FROM "))
        .filter_map(|l| l.split_once("/rust:").map(|(_, tag)| tag))
        .collect();
    assert_eq!(tags.len(), 1, "one rust build stage: {tags:?}");
    let tag = tags[0].split(['-', ' ']).next().unwrap_or_default();
    let image = rust_version(tag).unwrap_or_else(|| panic!("rust:{tag} names no version"));
    assert!(image >= needed, "rust:{tag} is older than {by}");

    // The workspace's rust-version, which every member inherits.
    let manifest: toml::Table = std::fs::read_to_string(root("Cargo.toml"))
        .expect("read")
        .parse()
        .expect("TOML");
    for table in ["package", "workspace"] {
        let package = if table == "package" {
            &manifest["package"]
        } else {
            &manifest["workspace"]["package"]
        };
        let declared = package["rust-version"].as_str().expect("rust-version");
        let v = rust_version(declared).expect("a version");
        assert!(
            v >= needed,
            "[{table}] rust-version {declared} is older than {by}"
        );
    }
    let members = manifest["workspace"]["members"]
        .as_array()
        .expect("members");
    for member in members {
        let member = member.as_str().expect("a path");
        let text = std::fs::read_to_string(root(&format!("{member}/Cargo.toml"))).expect("read");
        let package: toml::Table = text.parse().expect("TOML");
        assert_eq!(
            package["package"]["rust-version"]["workspace"].as_bool(),
            Some(true),
            "{member} inherits the workspace's rust-version"
        );
    }
}

#[test]
fn the_build_context_leaves_out_build_output_and_history() {
    let ignore = std::fs::read_to_string(root(".containerignore")).expect("read .containerignore");
    let patterns: Vec<&str> = ignore
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.trim_end_matches('/'))
        .collect();
    for excluded in ["target", ".git"] {
        assert!(patterns.contains(&excluded), "{excluded} is sent");
    }
    // Docker reads the same file.
    assert_eq!(
        std::fs::read_to_string(root(".dockerignore")).expect("read .dockerignore"),
        ignore
    );
    // What `cargo build --locked -p codemode-server` reads stays: the
    // manifests and lock file, every member's sources and the root
    // package's declared targets.
    let manifest: toml::Table = std::fs::read_to_string(root("Cargo.toml"))
        .expect("read")
        .parse()
        .expect("TOML");
    let mut needed = vec![
        "Cargo.toml".to_string(),
        "Cargo.lock".to_string(),
        "src/lib.rs".to_string(),
        "README.md".to_string(),
    ];
    for member in manifest["workspace"]["members"]
        .as_array()
        .expect("members")
    {
        needed.push(format!("{}/Cargo.toml", member.as_str().expect("a path")));
        needed.push(format!("{}/src", member.as_str().expect("a path")));
    }
    for bench in manifest["bench"].as_array().expect("[[bench]]") {
        needed.push(format!(
            "benches/{}.rs",
            bench["name"].as_str().expect("name")
        ));
    }
    for path in &needed {
        assert!(root(path).exists(), "{path}");
        for pattern in &patterns {
            let pattern = pattern.trim_start_matches("**/");
            let hit = path == pattern
                || path.starts_with(&format!("{pattern}/"))
                || path.split('/').any(|segment| segment == pattern);
            assert!(!hit, "{pattern} leaves out {path}");
        }
    }
    // The runtime image's binary carries no debug info.
    let containerfile = std::fs::read_to_string(deploy("Containerfile")).expect("read");
    assert!(
        containerfile.contains("CARGO_PROFILE_RELEASE_DEBUG=0"),
        "the release profile's debug info reaches the image"
    );
}
