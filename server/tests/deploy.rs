//! `deploy/` against the binary: every flag, config key, port, path and
//! probe the Containerfile and the Kubernetes manifests use exists, and the
//! sizes they state follow from the budgets of their configuration.

use clap::Parser;
use codemode_server::cli::{Cli, Command};
use codemode_server::config::FileConfig;
use codemode_server::http::health::{HEALTHZ, READYZ};
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
    assert_eq!(ports.len(), 1);
    assert_eq!(text(&ports[0], &["name"]), "http");
    assert_eq!(ports[0]["containerPort"].as_u64(), Some(port.into()));
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
    let tokens_key = tokens_file
        .file_name()
        .and_then(|n| n.to_str())
        .expect("name");
    let dir = std::env::temp_dir().join(format!("codemode-deploy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let local = toml.replace(tokens_file.to_str().expect("utf-8"), "tokens.toml");
    std::fs::write(dir.join("codemode.toml"), local).expect("write");
    std::fs::write(
        dir.join("tokens.toml"),
        text(&secret, &["stringData", tokens_key]),
    )
    .expect("write");
    let loaded = FileConfig::read(&dir.join("codemode.toml")).expect("loads with its secret");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!loaded.http.tokens.is_empty());
    codemode_server::http::HttpOptions::from_config(&loaded.http).expect("valid [http]");

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
    assert_eq!(resources.len(), 6);
}
