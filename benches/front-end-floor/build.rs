//! Derives `floor.lalrpop` from the real grammar (`lang/grammar/`): the
//! same productions, so the same LR(1) automaton, but every nonterminal of
//! type `()` and every action empty. What the generated parser then costs
//! is LALRPOP's driver alone: shifts, reductions, gotos, symbol moves.

use regex::{Captures, Regex};
use std::path::PathBuf;

fn main() {
    let grammar = "../../lang/grammar/starlark.lalrpop";
    println!("cargo:rerun-if-changed={grammar}");
    let text = std::fs::read_to_string(grammar).expect("the real grammar");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(out.join("floor.lalrpop"), empty_actions(&text)).expect("write");
    lalrpop::Configuration::new()
        .set_in_dir(&out)
        .set_out_dir(&out)
        .process()
        .expect("lalrpop");
}

fn empty_actions(text: &str) -> String {
    let (head, body) = text
        .split_once("// ---- Statements")
        .expect("the statements section");
    let mut header = String::new();
    for line in head.lines() {
        if line.starts_with("use ") {
            continue;
        }
        if line.starts_with("grammar<") {
            header.push_str("use codemode_lang::{LexError, Tok};\n");
            header.push_str("use codemode_lang::ast::Literal;\n\ngrammar<'a>;\n");
            continue;
        }
        header.push_str(line);
        header.push('\n');
    }
    let body: String = body
        .lines()
        .skip(1)
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| format!("{l}\n"))
        .collect();
    let body = Regex::new(r"(?m)^(pub )?(\w+): [^=\n]+ = ")
        .unwrap()
        .replace_all(&body, "$1$2: () = ");
    let body = strip_actions(&body);
    let body = Regex::new(r"<\w+:@[LR]>").unwrap().replace_all(&body, "");
    let body = Regex::new(r"<\w+:([^<>]+)>")
        .unwrap()
        .replace_all(&body, "$1");
    let body = Regex::new(r#"<([A-Za-z_"]+\??)>"#)
        .unwrap()
        .replace_all(&body, "$1");
    let body = body.replace("<>", "");
    // The one alternative list on a single line.
    let body = body.replace(
        r#"Eol: () = { "NEWLINE", "EOF" };"#,
        r#"Eol: () = { "NEWLINE" => (), "EOF" => () };"#,
    );
    let body = Regex::new(r"(?s)= \{(.*?)\n\};")
        .unwrap()
        .replace_all(&body, |c: &Captures| {
            let alternatives: Vec<String> = Regex::new(r",\s*\n")
                .unwrap()
                .split(&c[1])
                .map(|a| format!("\n    {} => ()", a.trim().trim_end_matches(',')))
                .collect();
            format!("= {{{},\n}};", alternatives.join(","))
        });
    let body = Regex::new(r"(?m)^((?:pub )?\w+: \(\) = )([^{\n].*?);$")
        .unwrap()
        .replace_all(&body, "$1$2 => ();");
    format!("{header}{body}")
}

/// Removes every `=> ...` / `=>? ...` action, up to the `,` or `;` that
/// ends its alternative.
fn strip_actions(body: &str) -> String {
    let bytes = body.as_bytes();
    let mut out = String::with_capacity(body.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i..].starts_with(b"=>") {
            let mut j = i + 2;
            if bytes.get(j) == Some(&b'?') {
                j += 1;
            }
            let mut depth = 0usize;
            while j < bytes.len() {
                match bytes[j] {
                    b'(' | b'{' | b'[' => depth += 1,
                    b')' | b'}' | b']' if depth == 0 => break,
                    b')' | b'}' | b']' => depth -= 1,
                    b',' | b';' if depth == 0 => break,
                    _ => {}
                }
                j += 1;
            }
            i = j;
            continue;
        }
        let c = body[i..].chars().next().expect("in bounds");
        out.push(c);
        i += c.len_utf8();
    }
    out
}
