//! The reference side: one long-lived Python process running
//! `ref_batch.py` under a Python that has the `starlark-go` binding. Programs
//! go to its stdin as JSON strings, one a line; outcomes come back the same
//! way, in order.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

pub struct Reference {
    child: Child,
    pub stdin: Option<ChildStdin>,
    pub stdout: BufReader<ChildStdout>,
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
    /// (appended) when given, else to ours.
    pub fn start(python: &PathBuf, log: Option<&Path>) -> Result<Reference, String> {
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
        Ok(Reference {
            child,
            stdin,
            stdout,
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

    pub fn stdin(&mut self) -> &mut ChildStdin {
        self.stdin.as_mut().unwrap()
    }

    /// The next outcome line.
    pub fn recv(&mut self) -> Result<String, String> {
        let mut line = String::new();
        let n = self
            .stdout
            .read_line(&mut line)
            .map_err(|e| format!("difftest: reading the reference: {e}"))?;
        if n == 0 {
            return Err("difftest: the reference exited (see its stderr)".into());
        }
        serde_json::from_str(&line)
            .map_err(|e| format!("difftest: bad reference line {line:?}: {e}"))
    }

    /// The process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// One program, synchronously.
    pub fn run_one(&mut self, program: &str) -> Result<String, String> {
        Reference::send_all(self.stdin(), &[program.to_string()])
            .map_err(|e| format!("difftest: writing to the reference: {e}"))?;
        self.recv()
    }
}

impl Drop for Reference {
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}
