//! Fuzzes binding: an arbitrary JSON object as the keyword arguments of a
//! capability picked by the first two bytes, from a catalog with every
//! shape the repository knows. Binding must succeed or fail with a detail
//! naming an argument; what it binds must be the canonical map (declared
//! fields only, in declaration order) and binding it again must give it
//! back unchanged.
#![no_main]

use codemode_catalog::bind;
use codemode_fuzz::{json_to_data, rich_catalog};
use codemode_vm::Data;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((pick, json)) = data.split_first_chunk::<2>() else {
        return;
    };
    let Ok(serde_json::Value::Object(object)) = serde_json::from_slice(json) else {
        return;
    };
    let mut args = Vec::with_capacity(object.len());
    for (name, value) in &object {
        let Some(value) = json_to_data(value) else {
            return;
        };
        args.push((name.clone(), value));
    }
    let catalog = rich_catalog();
    let names: Vec<&str> = catalog.names().collect();
    let name = names[usize::from(u16::from_le_bytes(*pick)) % names.len()];
    let cap = catalog.get(name).expect("a listed capability");
    let fields = cap.input();
    match bind(fields, args) {
        Ok(Data::Map(bound)) => {
            let mut order = fields.iter().map(|f| f.name.as_str());
            for (key, _) in &bound {
                assert!(
                    order.any(|f| f == key),
                    "{name}: {key} out of order or unknown"
                );
            }
            let again = bind(fields, bound.clone()).expect("a canonical map binds");
            assert_eq!(again, Data::Map(bound), "{name}: binding is not idempotent");
        }
        Ok(other) => panic!("{name}: bound to a non-map {other:?}"),
        Err(e) => {
            let text = e.to_string();
            assert!(text.starts_with("invalid capability arguments: "), "{text}");
            assert!(
                text.len() > "invalid capability arguments: ".len(),
                "{text}"
            );
        }
    }
});
