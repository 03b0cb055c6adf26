//! A line and block deletion minimizer. The generator writes one statement
//! a line, so deleting a line (with the block it opens) deletes a
//! statement; a block header can also be dropped with its body dedented.
//! A candidate is kept when the two interpreters still disagree in the same
//! way (the same outcome classes on both sides).

use crate::compare::{agrees, run_codemode, signature};
use crate::reference::Reference;

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

/// The end (exclusive) of the block opened by line `i`, or `i + 1`.
fn block_end(lines: &[String], i: usize) -> usize {
    let mut j = i + 1;
    if lines[i].trim_end().ends_with(':') {
        let ind = indent_of(&lines[i]);
        while j < lines.len() && indent_of(&lines[j]) > ind {
            j += 1;
        }
    }
    j
}

fn kind(sig: &str) -> &str {
    sig.split(':').next().unwrap_or(sig)
}

/// Shrinks `program` while it keeps disagreeing like it does now.
pub fn minimize(reference: &mut Reference, program: &str) -> Result<String, String> {
    let want = {
        let expected = reference.run_one(program)?;
        let got = run_codemode(program);
        if agrees(&expected, &got) {
            return Ok(program.to_string());
        }
        kind(&signature(&expected, &got)).to_string()
    };
    let mut still = |text: &str| -> Result<bool, String> {
        let expected = reference.run_one(text)?;
        let got = run_codemode(text);
        Ok(!agrees(&expected, &got) && kind(&signature(&expected, &got)) == want)
    };
    let mut lines: Vec<String> = program.lines().map(str::to_string).collect();
    loop {
        let mut changed = false;
        let mut i = lines.len();
        while i > 0 {
            i -= 1;
            if i >= lines.len() {
                continue;
            }
            let end = block_end(&lines, i);
            let mut cand: Vec<String> = lines[..i].to_vec();
            cand.extend_from_slice(&lines[end..]);
            if still(&join(&cand))? {
                lines = cand;
                changed = true;
                continue;
            }
            if end > i + 1 {
                // Drop the header, dedent the body.
                let mut cand: Vec<String> = lines[..i].to_vec();
                let ind = indent_of(&lines[i + 1]) - indent_of(&lines[i]);
                for l in &lines[i + 1..end] {
                    cand.push(l[ind.min(indent_of(l))..].to_string());
                }
                cand.extend_from_slice(&lines[end..]);
                if still(&join(&cand))? {
                    lines = cand;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    Ok(join(&lines))
}

fn join(lines: &[String]) -> String {
    let mut s = lines.join("\n");
    s.push('\n');
    s
}
