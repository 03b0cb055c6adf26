//! `difftest`: a semantic differential fuzzer of codemode against
//! starlark-go. See README.md next to this crate.
//!
//! ```text
//! difftest run [--start S] [--count N] [--batch B] [--findings DIR]
//!              [--python PY] [--unicode PCT] [--errors PCT] [--no-minimize]
//!              [--keep K] [--stats] [--timeout SECS]
//! difftest gen SEED [--unicode PCT] [--errors PCT]
//! difftest check FILE.star [--python PY]
//! difftest minimize FILE.star [--python PY]
//! ```

mod classify;
mod compare;
mod gen;
mod minimize;
mod reference;
mod rng;

use compare::{agrees, run_codemode, Outcome};
use reference::{Failure, Reference};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

struct Args {
    positional: Vec<String>,
    flags: BTreeMap<String, String>,
}

fn parse_args() -> Args {
    let mut positional = Vec::new();
    let mut flags = BTreeMap::new();
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        if let Some(name) = a.strip_prefix("--") {
            if name.starts_with("no-") || name == "stats" {
                flags.insert(name.to_string(), String::new());
            } else {
                flags.insert(name.to_string(), it.next().unwrap_or_default());
            }
        } else {
            positional.push(a);
        }
    }
    Args { positional, flags }
}

impl Args {
    fn num(&self, name: &str, default: u64) -> u64 {
        self.flags
            .get(name)
            .map(|v| {
                v.parse()
                    .unwrap_or_else(|_| panic!("--{name}: not a number: {v}"))
            })
            .unwrap_or(default)
    }
    fn gen_options(&self) -> gen::Options {
        let d = gen::Options::default();
        gen::Options {
            unicode_pct: self.num("unicode", d.unicode_pct as u64) as u32,
            error_pct: self.num("errors", d.error_pct as u64) as u32,
        }
    }
}

fn main() -> ExitCode {
    let args = parse_args();
    let cmd = args.positional.first().map(String::as_str).unwrap_or("");
    let r = match cmd {
        "run" => run(&args),
        "gen" => {
            let seed: u64 = args
                .positional
                .get(1)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            print!("{}", gen::generate(seed, &args.gen_options()));
            Ok(())
        }
        "check" => check(&args),
        "minimize" => minimize_cmd(&args),
        _ => Err("usage: difftest run|gen|check|minimize ... (see fuzz/difftest/README.md)".into()),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::from(2)
        }
    }
}

/// Starts the reference; its stderr goes to `DIR/reference-stderr.log` when
/// a directory is given.
fn start_reference(args: &Args, dir: Option<&Path>) -> Result<Reference, String> {
    let py = reference::locate(args.flags.get("python").cloned())?;
    let log = dir.map(|d| d.join("reference-stderr.log"));
    let timeout = std::time::Duration::from_secs(args.num("timeout", 20));
    let mut r = Reference::start(&py, log.as_deref(), timeout)?;
    // A first program proves the binding loads.
    let probe = r.run_one("def main():\n    return 1\n")?;
    if probe != "{\"result\":1}" {
        return Err(format!("difftest: the reference does not work: {probe}"));
    }
    Ok(r)
}

fn read_program(args: &Args) -> Result<String, String> {
    let path = args.positional.get(1).ok_or("difftest: which file?")?;
    std::fs::read_to_string(path).map_err(|e| format!("difftest: {path}: {e}"))
}

fn check(args: &Args) -> Result<(), String> {
    let src = read_program(args)?;
    let mut r = start_reference(args, None)?;
    let expected = r.run_one(&src)?;
    let got = run_codemode(&src);
    println!("starlark-go: {expected}");
    println!("codemode:    {}", got.line());
    println!(
        "{}",
        if agrees(&expected, &got) {
            "agree"
        } else {
            "DISAGREE"
        }
    );
    Ok(())
}

fn minimize_cmd(args: &Args) -> Result<(), String> {
    let src = read_program(args)?;
    let mut r = start_reference(args, None)?;
    print!("{}", minimize::minimize(&mut r, &src)?);
    Ok(())
}

struct Stats {
    programs: u64,
    ref_results: u64,
    ref_errors: u64,
    filtered: u64,
    disagreements: u64,
    classes: BTreeMap<String, u64>,
    /// Reference error messages (digits blanked), to tune the generator.
    ref_messages: BTreeMap<String, u64>,
}

impl Stats {
    /// The counts of a run that took `secs` seconds, as the progress and
    /// summary lines give them (`run.sh` reads " 0 disagreements," there).
    fn counts(&self, secs: f64) -> String {
        format!(
            "{} programs, {} ref results, {} ref errors, {} disagreements, {} filtered, {:.0} programs/s",
            self.programs,
            self.ref_results,
            self.ref_errors,
            self.disagreements,
            self.filtered,
            self.programs as f64 / secs
        )
    }
}

fn run(args: &Args) -> Result<(), String> {
    let start = args.num("start", 0);
    let count = args.num("count", 10_000);
    let batch = args.num("batch", 2_000).max(1);
    let findings = PathBuf::from(
        args.flags
            .get("findings")
            .cloned()
            .unwrap_or_else(|| "findings".into()),
    );
    let minimize_on = !args.flags.contains_key("no-minimize");
    let keep_per_class = args.num("keep", 5);
    let opts = args.gen_options();
    std::fs::create_dir_all(&findings).map_err(|e| format!("{}: {e}", findings.display()))?;
    let mut reference = start_reference(args, Some(&findings))?;
    let mut stats = Stats {
        programs: 0,
        ref_results: 0,
        ref_errors: 0,
        filtered: 0,
        disagreements: 0,
        classes: BTreeMap::new(),
        ref_messages: BTreeMap::new(),
    };
    let t0 = Instant::now();
    let mut seed = start;
    let end = start + count;
    while seed < end {
        let n = batch.min(end - seed);
        let seeds: Vec<u64> = (seed..seed + n).collect();
        let programs: Vec<String> = seeds.iter().map(|s| gen::generate(*s, &opts)).collect();
        // The reference works through the batch while codemode runs it here.
        let outcomes = std::thread::scope(|sc| {
            let stdin = reference.stdin.as_mut().unwrap();
            let progs = &programs;
            // A failed write means the reference died; `recv` sees that.
            sc.spawn(move || Reference::send_all(stdin, progs));
            programs
                .iter()
                .map(|p| run_codemode(p))
                .collect::<Vec<Outcome>>()
        });
        let mut expected: Vec<Result<String, Failure>> = Vec::with_capacity(programs.len());
        for _ in 0..programs.len() {
            let r = reference.recv();
            let failed = r.is_err();
            expected.push(r);
            if failed {
                break;
            }
        }
        if expected.last().is_some_and(|e| e.is_err()) {
            // The reference died or hung on the last program: restart it
            // and run the rest one at a time, restarting after each failure.
            reference = start_reference(args, Some(&findings))?;
            for p in &programs[expected.len()..] {
                let r = reference.run_one(p);
                if r.is_err() {
                    reference = start_reference(args, Some(&findings))?;
                }
                expected.push(r);
            }
        }
        for ((s, p), (exp, got)) in seeds
            .iter()
            .zip(&programs)
            .zip(expected.iter().zip(&outcomes))
        {
            stats.programs += 1;
            let exp = match exp {
                Ok(exp) => exp,
                Err(f) => {
                    // starlark-go cannot run this program: filtered.
                    stats.filtered += 1;
                    let class = match f {
                        Failure::Crashed => "filtered-reference-crash",
                        Failure::TimedOut => "filtered-reference-timeout",
                    }
                    .to_string();
                    let seen = stats.classes.entry(class.clone()).or_insert(0);
                    *seen += 1;
                    if *seen <= keep_per_class {
                        let what = format!("{f:?}");
                        record(&findings.join(&class), *s, p, &what, got, None)?;
                    }
                    continue;
                }
            };
            if exp.starts_with("{\"result\"") {
                stats.ref_results += 1;
            } else {
                stats.ref_errors += 1;
                let m: String = exp
                    .rsplit(": ")
                    .next()
                    .unwrap_or("")
                    .chars()
                    .map(|c| if c.is_ascii_digit() { '0' } else { c })
                    .take(50)
                    .collect();
                *stats.ref_messages.entry(m).or_insert(0) += 1;
            }
            if agrees(exp, got) {
                continue;
            }
            let class = classify::classify(exp, got);
            if class.starts_with("filtered-") {
                stats.filtered += 1;
            } else {
                stats.disagreements += 1;
            }
            let seen = stats.classes.entry(class.clone()).or_insert(0);
            *seen += 1;
            if *seen <= keep_per_class {
                let dir = findings.join(&class);
                record(
                    &dir,
                    *s,
                    p,
                    exp,
                    got,
                    // A budget refusal is no defect to reduce (and its
                    // program is often a large one for the reference).
                    if minimize_on && !class.starts_with("filtered-") {
                        Some(&mut reference)
                    } else {
                        None
                    },
                )?;
            }
            if !reference.alive() {
                reference = start_reference(args, Some(&findings))?;
            }
        }
        seed += n;
        let secs = t0.elapsed().as_secs_f64();
        eprintln!("difftest: seeds {start}..{seed}: {}", stats.counts(secs));
    }
    let secs = t0.elapsed().as_secs_f64();
    let mut summary = format!(
        "seeds {start}..{end} unicode={} errors={}: {}, {secs:.1} s\n",
        opts.unicode_pct,
        opts.error_pct,
        stats.counts(secs),
    );
    for (c, n) in &stats.classes {
        summary.push_str(&format!("  {n:>8}  {c}\n"));
    }
    if args.flags.contains_key("stats") {
        let mut msgs: Vec<(&String, &u64)> = stats.ref_messages.iter().collect();
        msgs.sort_by(|a, b| b.1.cmp(a.1));
        summary.push_str("  reference errors by message:\n");
        for (m, n) in msgs.iter().take(25) {
            summary.push_str(&format!("  {n:>8}  {m}\n"));
        }
    }
    print!("{summary}");
    let mut log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(findings.join("runs.log"))
        .map_err(|e| e.to_string())?;
    log.write_all(summary.as_bytes())
        .map_err(|e| e.to_string())?;
    Ok(())
}

fn record(
    dir: &Path,
    seed: u64,
    program: &str,
    expected: &str,
    got: &Outcome,
    reference: Option<&mut Reference>,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let base = dir.join(format!("seed{seed}"));
    let w = |ext: &str, text: &str| -> Result<(), String> {
        std::fs::write(base.with_extension(ext), text).map_err(|e| e.to_string())
    };
    w("star", program)?;
    let mut report = format!(
        "seed: {seed}\nstarlark-go: {}\ncodemode:    {}\n",
        clip(expected),
        clip(&got.line())
    );
    if let Some(r) = reference {
        let minimized = minimize::minimize(r, program).and_then(|min| {
            let exp = r.run_one(&min)?;
            Ok((min, exp))
        });
        match minimized {
            Ok((min, exp)) => {
                let got = run_codemode(&min);
                report.push_str(&format!(
                    "\nminimized ({} lines):\nstarlark-go: {}\ncodemode:    {}\n",
                    min.lines().count(),
                    clip(&exp),
                    clip(&got.line())
                ));
                w("min.star", &min)?;
            }
            // The reference died on a candidate; the caller restarts it.
            Err(e) => report.push_str(&format!("\nnot minimized: {e}\n")),
        }
    }
    w("txt", &report)
}

/// An outcome line for a report, cut after 2,000 characters (a program that
/// ran into a budget can have a result of megabytes in the reference).
fn clip(line: &str) -> String {
    match line.char_indices().nth(2000) {
        Some((i, _)) => format!("{}... ({} bytes in all)", &line[..i], line.len()),
        None => line.to_string(),
    }
}
