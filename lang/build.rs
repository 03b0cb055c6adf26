//! Generates the parser from `grammar/starlark.lalrpop` into `OUT_DIR`
//! (the generated code is never committed).

fn main() {
    println!("cargo:rerun-if-changed=grammar/starlark.lalrpop");
    if let Err(e) = lalrpop::Configuration::new()
        .emit_rerun_directives(true)
        .process_dir("grammar")
    {
        eprintln!("lalrpop failed: {e}");
        std::process::exit(1);
    }
}
