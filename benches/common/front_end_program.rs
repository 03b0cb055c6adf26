//! The generated program the front-end benchmarks parse: realistic
//! Starlark (defs with loops, branches, comprehensions, closures, dict and
//! list displays, calls, string literals) repeated with varied names and
//! literals up to a requested size. Shared by `benches/parse.rs` and the
//! LALRPOP floor measurement in `benches/front-end-floor/`.

use std::fmt::Write;

/// One block of globals and functions, varied by `i` so that names,
/// literals and shapes differ across the program.
fn unit(out: &mut String, i: usize) {
    let limit = i % 97;
    let _ = write!(
        out,
        r#"LIMIT_{i} = {limit}
NAMES_{i} = ["alpha", "beta", 'gamma', "delta-{i}", """multi
line {i}"""]

def summarise_{i}(items, limit = LIMIT_{i}, *args, scale = 1.5, **kwargs):
    """Summarise the records of batch {i}."""
    total = 0
    seen = {{}}
    for index, item in enumerate(items):
        if index >= limit:
            break
        elif item == None:
            continue
        key = "k%d" % index
        seen[key] = seen.get(key, 0) + item * 2 - (index // 3) % 7
        total += item
    pairs = [(k, v) for k, v in sorted(seen.items()) if v > 1]
    lookup = {{name: len(name) for name in NAMES_{i} if name.startswith("a") or name.endswith("a")}}
    grow = lambda x, factor = scale: x * factor
    def inner(n):
        return [grow(v) for _, v in pairs[:n]] + [total, -limit, ~{i}]
    result = {{
        "id": {i},
        "total": total,
        "pairs": pairs,
        "lookup": lookup,
        "values": inner(len(pairs)),
        "label": "record-" + str({i}) + 'x\n',
        "flags": [True, False, None, -1, 0x1F, 3.25e-2, b"raw\x00"],
    }}
    return result if total > 0 else dict(result, empty = True, tail = args[1:] if args else ())

def check_{i}(rows):
    ok = [r for r in rows if type(r) == "dict" and r.get("id") != None]
    names = sorted([str(r["id"]) for r in ok], reverse = True)
    return {{"count": len(ok), "names": ",".join(names), "first": names[0] if names else None}}

"#
    );
}

/// A program of at least `bytes` bytes with a `main`.
pub fn program(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 4096);
    let mut i = 0;
    while out.len() < bytes {
        unit(&mut out, i);
        i += 1;
    }
    out.push_str("def main():\n    return check_0([summarise_0([1, 2, 3])])\n");
    out
}
