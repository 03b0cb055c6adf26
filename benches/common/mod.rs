//! Shared by the criterion benchmarks.

/// The program `benches/programs/NAME.star` with `range(N)` set to `n`.
pub fn program(name: &str, n: u64) -> String {
    let path = format!(
        "{}/benches/programs/{name}.star",
        env!("CARGO_MANIFEST_DIR")
    );
    let src = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    src.replace("range(N)", &format!("range({n})"))
}
