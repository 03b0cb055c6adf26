//! The reference side: one long-lived Python process running
//! `ref_batch.py` under a Python that has the `starlark-go` binding. Programs
//! go to its stdin as JSON strings, one a line; outcomes come back the same
//! way, in order, through a reader thread, so that a program the reference
//! takes too long on (starlark-go has no budgets) can be given up: the
//! process is killed and the caller starts a new one.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

pub struct Reference {
    child: Child,
    pub stdin: Option<ChildStdin>,
    rx: Receiver<String>,
    timeout: Duration,
}

/// Why no outcome came back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Failure {
    /// The process died (the binding aborts on some results).
    Crashed,
    /// No outcome within the timeout; the process was killed.
    TimedOut,
}

/// Where the reference Python is: `--python` or `$DIFFTEST_PYTHON`.
pub fn locate(option: Option<String>) -> Result<PathBuf, String> {
    let p = option
        .or_else(|| std::env::var("DIFFTEST_PYTHON").ok())
        .ok_or_else(|| {
            "difftest: no reference. Set DIFFTEST_PYTHON (or pass --python) to a Python \
             interpreter that has the starlark-go binding: \
             python3 -m venv VENV && VENV/bin/pip install starlark-go==1.0.1, \
             then DIFFTEST_PYTHON=VENV/bin/python"
                .to_string()
        })?;
    let p = PathBuf::from(p);
    if !p.exists() {
        return Err(format!(
            "difftest: the reference Python {} does not exist (DIFFTEST_PYTHON / --python)",
            p.display()
        ));
    }
    Ok(p)
}

impl Reference {
    /// Starts `ref_batch.py` under `python`; its stderr goes to `log`
    /// (appended) when given, else to ours. An outcome that takes longer
    /// than `timeout` is given up.
    pub fn start(
        python: &PathBuf,
        log: Option<&Path>,
        timeout: Duration,
    ) -> Result<Reference, String> {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("ref_batch.py");
        let stderr = match log {
            Some(path) => Stdio::from(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| format!("difftest: {}: {e}", path.display()))?,
            ),
            None => Stdio::inherit(),
        };
        let mut child = Command::new(python)
            .arg(&script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .map_err(|e| format!("difftest: cannot start {}: {e}", python.display()))?;
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                let Ok(outcome) = serde_json::from_str::<String>(&line) else {
                    break;
                };
                if tx.send(outcome).is_err() {
                    break;
                }
            }
        });
        Ok(Reference {
            child,
            stdin,
            rx,
            timeout,
        })
    }

    /// Sends programs (without waiting for their outcomes).
    pub fn send_all(stdin: &mut ChildStdin, programs: &[String]) -> std::io::Result<()> {
        let mut buf = Vec::new();
        for p in programs {
            serde_json::to_writer(&mut buf, p)?;
            buf.push(b'\n');
        }
        stdin.write_all(&buf)?;
        stdin.flush()
    }

    /// The next outcome, in the order the programs were sent.
    pub fn recv(&mut self) -> Result<String, Failure> {
        match self.rx.recv_timeout(self.timeout) {
            Ok(o) => Ok(o),
            Err(RecvTimeoutError::Timeout) => {
                let _ = self.child.kill();
                Err(Failure::TimedOut)
            }
            Err(RecvTimeoutError::Disconnected) => Err(Failure::Crashed),
        }
    }

    /// One program, synchronously.
    pub fn run_one(&mut self, program: &str) -> Result<String, Failure> {
        match self.stdin.as_mut() {
            Some(stdin) => {
                if Reference::send_all(stdin, &[program.to_string()]).is_err() {
                    return Err(Failure::Crashed);
                }
            }
            None => return Err(Failure::Crashed),
        }
        self.recv()
    }

    /// The process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl From<Failure> for String {
    fn from(f: Failure) -> String {
        match f {
            Failure::Crashed => "difftest: the reference exited (see its stderr)".into(),
            Failure::TimedOut => "difftest: the reference timed out".into(),
        }
    }
}

impl Drop for Reference {
    fn drop(&mut self) {
        // End of input ends a healthy reference; a busy one is killed.
        drop(self.stdin.take());
        for _ in 0..50 {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
