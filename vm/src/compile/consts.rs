//! A function's constant table: each constant a literal, a universal or
//! predeclared name, or a folded expression denotes is added once, looked
//! up by its key ([`ConstKey`]) in an index that is a short list scanned
//! while the function has few constants and a hash table past that
//! ([`ConstIndex`]). Values without a key (bytes, big ints, constant
//! tuples) get a slot of their own each time.

use super::{too_large, FnCompiler};
use crate::error::{Error, Result};
use crate::opcode::MAX_OPERAND;
use crate::value::Value;
use bumpalo::collections::Vec as BumpVec;
use codemode_lang::ast::*;
use rustc_hash::FxHashMap;

#[derive(Hash, PartialEq, Eq, Clone, Copy)]
pub(super) enum ConstKey<'h> {
    None,
    Int(i64),
    Float(u64),
    Str(&'h str),
    Global(u32),
}

/// How many keyed constants [`ConstIndex`] scans before it builds a table.
pub(super) const CONST_SCAN: usize = 24;

/// The index of a function's deduplicated constants: a list scanned while
/// short (most functions have a dozen constants, for which hashing cost
/// more than comparing), a hash table once it grows past [`CONST_SCAN`].
pub(super) struct ConstIndex<'h> {
    pub(super) list: BumpVec<'h, (ConstKey<'h>, u16)>,
    pub(super) table: FxHashMap<ConstKey<'h>, u16>,
}

impl<'h> ConstIndex<'h> {
    fn get(&self, key: &ConstKey<'h>) -> Option<u16> {
        if self.table.is_empty() {
            self.list.iter().find(|(k, _)| k == key).map(|&(_, i)| i)
        } else {
            self.table.get(key).copied()
        }
    }

    fn insert(&mut self, key: ConstKey<'h>, i: u16) {
        if self.table.is_empty() {
            if self.list.len() < CONST_SCAN {
                self.list.push((key, i));
                return;
            }
            self.table.extend(self.list.iter().copied());
        }
        self.table.insert(key, i);
    }
}

impl<'h> FnCompiler<'h, '_> {
    pub(super) fn konst(&mut self, key: ConstKey<'h>, v: Value<'h>) -> Result<u16> {
        if let Some(k) = self.const_index.get(&key) {
            return Ok(k);
        }
        self.konst_new(key, v)
    }

    /// A constant whose key is not in the index yet.
    pub(super) fn konst_new(&mut self, key: ConstKey<'h>, v: Value<'h>) -> Result<u16> {
        let k = self.consts.len();
        if k > MAX_OPERAND {
            return Err(too_large(self.pos));
        }
        self.consts.push(v);
        self.const_index.insert(key, k as u16);
        Ok(k as u16)
    }

    /// A constant that is not deduplicated (values without a key).
    pub(super) fn konst_value(&mut self, v: Value<'h>) -> Result<u16> {
        let k = self.consts.len();
        if k > MAX_OPERAND {
            return Err(too_large(self.pos));
        }
        self.consts.push(v);
        Ok(k as u16)
    }

    pub(super) fn str_const(&mut self, s: &'h str) -> Result<u16> {
        if let Some(k) = self.const_index.get(&ConstKey::Str(s)) {
            return Ok(k);
        }
        let v = self.env.str_const(s)?;
        self.konst_new(ConstKey::Str(s), v)
    }

    pub(super) fn literal_const(&mut self, lit: &Literal<'h>) -> Result<u16> {
        match *lit {
            Literal::Int(i) => self.konst(ConstKey::Int(i), Value::Int(i)),
            Literal::Float(f) => self.konst(ConstKey::Float(f.to_bits()), Value::Float(f)),
            Literal::String(s) => self.str_const(s),
            Literal::Bytes(b) => {
                let v = self.env.heap.bytes(b)?;
                self.konst_value(v)
            }
            Literal::BigInt { digits, radix } => {
                let n = num_bigint::BigInt::parse_bytes(digits.as_bytes(), radix)
                    .ok_or_else(|| Error::msg("invalid int literal"))?;
                let v = self.env.heap.int(n)?;
                self.konst_value(v)
            }
        }
    }

    /// The constant holding a universal or predeclared name's value.
    pub(super) fn var_const(&mut self, id: &'h Ident<'h>) -> Result<u16> {
        let (key, v) = match id.binding.get() {
            Binding::Universal(u) => (
                ConstKey::Global(u | 0x8000_0000),
                self.env.universal.get(u as usize).copied(),
            ),
            Binding::Predeclared(p) => (
                ConstKey::Global(p),
                self.env.predeclared.get(p as usize).copied(),
            ),
            _ => (ConstKey::None, None),
        };
        let v = v.ok_or_else(|| Error::msg("internal error: unknown name").at(id.span.start))?;
        self.konst(key, v)
    }
}
