//! The register bytecode: instructions, compiled functions, disassembly.
//!
//! Each function gets a frame of `nregs` registers: its locals first (in
//! the resolver's slot order, parameters leading), then temporaries. Most
//! operands are registers ([`Reg`]); operands of arithmetic and comparison
//! may also name a constant ([`Rk`] with the high bit set), so `t += i * 2`
//! is two instructions with no loads. Every instruction has a source
//! position beside it in [`Code::positions`]; an error is reported there.

use crate::template::Template;
use crate::value::Value;
use codemode_lang::ast::Pos;
use std::cell::Cell;
use std::fmt::Write;

/// A register of the current frame.
pub type Reg = u16;

/// A register, or a constant when the high bit is set (`RK_CONST | k`).
pub type Rk = u16;

/// The bit of an [`Rk`] operand that marks a constant.
pub const RK_CONST: u16 = 0x8000;

/// The largest register or constant index an operand can name.
pub const MAX_OPERAND: usize = 0x7fff;

/// Registers a `for` loop's iteration state takes, from the `dst` of its
/// [`Instr::IterStart`].
pub const ITER_REGS: usize = 3;

/// The `fill` of an [`Instr::IterStart`] that fills no list (no register
/// is numbered this high: see [`MAX_OPERAND`]).
pub const NO_FILL: Reg = Reg::MAX;

/// The most keys of a [`Instr::MakeRecord`]: the dicts that are searched
/// without an index (see [`crate::dict`]).
pub const RECORD_KEYS: usize = 8;

/// A dict display of [`Instr::MakeRecord`]: its keys (distinct strings,
/// 1 to [`RECORD_KEYS`]), their hashes, and the register of each key's value (a local's
/// own register, or a temporary: nothing evaluated after a value writes
/// its register).
#[derive(Clone, Copy)]
pub struct Record<'h> {
    pub keys: &'h [Value<'h>],
    /// The keys' hashes (as a dict keeps them), computed when compiled.
    pub hashes: &'h [u32],
    pub srcs: &'h [Reg],
}

/// One instruction. The comment on each variant is its effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Instr {
    /// `r[dst] = r[src]`
    Move {
        dst: Reg,
        src: Reg,
    },
    /// `r[dst] = consts[k]`
    Const {
        dst: Reg,
        k: u16,
    },
    /// Fails with "local variable NAME referenced before assignment" when
    /// `r[reg]` is unbound (`consts[name]` is the name).
    CheckBound {
        reg: Reg,
        name: u16,
    },
    /// `r[dst] = globals[g]`, failing when it is unbound.
    LoadGlobal {
        dst: Reg,
        g: u16,
    },
    /// `globals[g] = r[src]`
    StoreGlobal {
        g: u16,
        src: Reg,
    },
    /// `r[dst] = r[slot].cell`, failing when the cell is unbound.
    LoadCell {
        dst: Reg,
        slot: Reg,
    },
    /// `r[slot].cell = r[src]`
    StoreCell {
        slot: Reg,
        src: Reg,
    },
    /// `r[dst] = freevars[idx]`, failing when the cell is unbound.
    LoadFree {
        dst: Reg,
        idx: u16,
    },
    /// `r[dst] = a OP b` for arithmetic, bitwise and membership operators.
    Add {
        dst: Reg,
        a: Rk,
        b: Rk,
    },
    Sub {
        dst: Reg,
        a: Rk,
        b: Rk,
    },
    Mul {
        dst: Reg,
        a: Rk,
        b: Rk,
    },
    Div {
        dst: Reg,
        a: Rk,
        b: Rk,
    },
    FloorDiv {
        dst: Reg,
        a: Rk,
        b: Rk,
    },
    Mod {
        dst: Reg,
        a: Rk,
        b: Rk,
    },
    BitAnd {
        dst: Reg,
        a: Rk,
        b: Rk,
    },
    BitOr {
        dst: Reg,
        a: Rk,
        b: Rk,
    },
    BitXor {
        dst: Reg,
        a: Rk,
        b: Rk,
    },
    Shl {
        dst: Reg,
        a: Rk,
        b: Rk,
    },
    Shr {
        dst: Reg,
        a: Rk,
        b: Rk,
    },
    In {
        dst: Reg,
        a: Rk,
        b: Rk,
    },
    NotIn {
        dst: Reg,
        a: Rk,
        b: Rk,
    },
    /// `r[dst] = a == b` and the other comparisons.
    Eq {
        dst: Reg,
        a: Rk,
        b: Rk,
    },
    Ne {
        dst: Reg,
        a: Rk,
        b: Rk,
    },
    Lt {
        dst: Reg,
        a: Rk,
        b: Rk,
    },
    Le {
        dst: Reg,
        a: Rk,
        b: Rk,
    },
    Gt {
        dst: Reg,
        a: Rk,
        b: Rk,
    },
    Ge {
        dst: Reg,
        a: Rk,
        b: Rk,
    },
    /// `r[dst] = a += b`: lists are extended in place.
    InplaceAdd {
        dst: Reg,
        a: Rk,
        b: Rk,
    },
    /// `r[dst] = a |= b`: dicts are updated in place.
    InplaceOr {
        dst: Reg,
        a: Rk,
        b: Rk,
    },
    /// The forms of `Add` ... `Ge` and `InplaceAdd` whose `b` is an int
    /// constant that fits an `i32` and whose `a` is a register: the
    /// compiler rewrites them so ([`Instr::with_int_operand`]), which saves
    /// the interpreter the operand decoding. Same effect, same errors, and
    /// the same disassembly as the general form.
    AddI {
        dst: Reg,
        a: Reg,
        k: i32,
    },
    SubI {
        dst: Reg,
        a: Reg,
        k: i32,
    },
    MulI {
        dst: Reg,
        a: Reg,
        k: i32,
    },
    ModI {
        dst: Reg,
        a: Reg,
        k: i32,
    },
    InplaceAddI {
        dst: Reg,
        a: Reg,
        k: i32,
    },
    EqI {
        dst: Reg,
        a: Reg,
        k: i32,
    },
    NeI {
        dst: Reg,
        a: Reg,
        k: i32,
    },
    LtI {
        dst: Reg,
        a: Reg,
        k: i32,
    },
    LeI {
        dst: Reg,
        a: Reg,
        k: i32,
    },
    GtI {
        dst: Reg,
        a: Reg,
        k: i32,
    },
    GeI {
        dst: Reg,
        a: Reg,
        k: i32,
    },
    /// `r[dst] = -r[src]`
    Neg {
        dst: Reg,
        src: Reg,
    },
    /// `r[dst] = +r[src]`
    Plus {
        dst: Reg,
        src: Reg,
    },
    /// `r[dst] = ~r[src]`
    Invert {
        dst: Reg,
        src: Reg,
    },
    /// `r[dst] = not r[src]`
    Not {
        dst: Reg,
        src: Reg,
    },
    /// `pc = to`
    Jump {
        to: u32,
    },
    /// `if not r[cond]: pc = to`
    JumpIfFalse {
        cond: Reg,
        to: u32,
    },
    /// `if r[cond]: pc = to`
    JumpIfTrue {
        cond: Reg,
        to: u32,
    },
    /// Starts iterating `r[src]` in the [`ITER_REGS`] registers at `dst`:
    /// a range is iterated in the registers themselves (`r[dst]` the next
    /// int, `r[dst+1]` how many are left, `r[dst+2]` the step); anything
    /// else gets an iterator object in `r[dst]`, and a list or dict is
    /// marked as iterated. `fill`, unless [`NO_FILL`], is the list a
    /// comprehension appends to once per iteration: made empty just
    /// before, it is given room for every element at once when `r[src]`
    /// tells its length (see [`crate::heap::Heap::presize`]).
    IterStart {
        dst: Reg,
        src: Reg,
        fill: Reg,
    },
    /// `r[dst] = next(r[iter]); pc = body`, or fall through when the
    /// iteration is exhausted (the test at the bottom of an inverted loop).
    ForNext {
        iter: Reg,
        dst: Reg,
        body: u32,
    },
    /// Ends the iteration of `r[iter]` (releases the iterated mark).
    IterEnd {
        iter: Reg,
    },
    /// `r[dst] = r[base](r[base+1..])` as described by `sites[site]`.
    Call {
        dst: Reg,
        base: Reg,
        site: u16,
    },
    /// `r[dst] = r[base].NAME(r[base+1..])` as described by `sites[site]`.
    CallMethod {
        dst: Reg,
        base: Reg,
        site: u16,
    },
    /// `r[dst] = r[x].NAME` (`consts[name]`).
    GetAttr {
        dst: Reg,
        x: Reg,
        name: u16,
    },
    /// `r[x].NAME = r[src]`: always an error in this language.
    SetAttr {
        x: Reg,
        name: u16,
        src: Reg,
    },
    /// `r[dst] = r[x][i]`. `hint` names this site's cell of
    /// [`Code::hints`]: where a dict held a string key here last time.
    Index {
        dst: Reg,
        x: Reg,
        i: Rk,
        hint: u16,
    },
    /// `r[dst] = templates[t] % args`: a `%` whose left operand is a
    /// string literal read into a [`Template`] when compiled. The
    /// arguments are `r[src]`, or the `nconv` registers from `r[src]` when
    /// the template is `spread` (the items of a tuple display, no tuple
    /// built).
    Percent {
        dst: Reg,
        t: u16,
        src: Reg,
    },
    /// `r[x][i] = r[src]` (`hint` as for [`Instr::Index`]).
    SetIndex {
        x: Reg,
        i: Rk,
        src: Reg,
        hint: u16,
    },
    /// `r[dst] = r[base][r[base+1]:r[base+2]:r[base+3]]`
    Slice {
        dst: Reg,
        base: Reg,
    },
    /// `r[dst] = [r[base], ..., r[base+n-1]]`
    MakeList {
        dst: Reg,
        base: Reg,
        n: u16,
    },
    /// `r[dst] = [...]`, a new list of the items of the constant tuple `k`
    /// (a list display whose items are all constants).
    ListOf {
        dst: Reg,
        k: u16,
    },
    /// `r[dst] = (r[base], ..., r[base+n-1])`
    MakeTuple {
        dst: Reg,
        base: Reg,
        n: u16,
    },
    /// `r[dst] = {}` with room for `n` entries.
    MakeDict {
        dst: Reg,
        n: u16,
    },
    /// `r[dict][r[key]] = r[src]`, failing if the key is present (displays).
    DictSetUnique {
        dict: Reg,
        key: Reg,
        src: Reg,
    },
    /// `r[dict][consts[k]] = r[src]` for a key the compiler proved new: a
    /// display whose keys are distinct string literals, each the constant
    /// `k` (no instruction loads it). Its effect is `DictSetUnique`'s
    /// without the search for the key.
    DictPushNew {
        dict: Reg,
        k: u16,
        src: Reg,
    },
    /// `r[dst] = {keys[0]: r[srcs[0]], ...}` for the [`Record`]
    /// `records[rec]`: a new dict of a display of 1 to [`RECORD_KEYS`]
    /// distinct string literals, whose values were evaluated before it, in
    /// order. Its effect and its steps (`1 + n`) are those of `MakeDict`
    /// and `n` `DictPushNew` with the values evaluated between them.
    MakeRecord {
        dst: Reg,
        rec: u16,
    },
    /// `r[list].append(r[src])` (comprehensions).
    ListAppend {
        list: Reg,
        src: Reg,
    },
    /// `r[dict][r[key]] = r[src]` (comprehensions).
    DictSet {
        dict: Reg,
        key: Reg,
        src: Reg,
    },
    /// `r[dst] = function(functions[func])` with defaults `r[base..]`.
    MakeFunction {
        dst: Reg,
        func: u16,
        base: Reg,
    },
    /// A `load` statement: always fails, as in starlark-go without a loader.
    Load,
    /// `r[base], ..., r[base+n-1] = r[src]`
    Unpack {
        base: Reg,
        src: Reg,
        n: u16,
    },
    /// Returns `src` from the frame.
    Return {
        src: Rk,
    },
}

const _: () = assert!(std::mem::size_of::<Instr>() <= 12);

impl Instr {
    /// The int-operand form of this instruction when `a` is a register and
    /// `b` a constant that `int_const` (given the constant's index) finds to
    /// be an int in `i32` range; `None` when there is none.
    pub fn with_int_operand(self, int_const: impl FnOnce(u16) -> Option<i64>) -> Option<Instr> {
        use Instr::*;
        let (dst, a, b) = match self {
            Add { dst, a, b }
            | Sub { dst, a, b }
            | Mul { dst, a, b }
            | Mod { dst, a, b }
            | InplaceAdd { dst, a, b }
            | Eq { dst, a, b }
            | Ne { dst, a, b }
            | Lt { dst, a, b }
            | Le { dst, a, b }
            | Gt { dst, a, b }
            | Ge { dst, a, b } => (dst, a, b),
            _ => return None,
        };
        if a & RK_CONST != 0 || b & RK_CONST == 0 {
            return None;
        }
        let k = i32::try_from(int_const(b & !RK_CONST)?).ok()?;
        Some(match self {
            Add { .. } => AddI { dst, a, k },
            Sub { .. } => SubI { dst, a, k },
            Mul { .. } => MulI { dst, a, k },
            Mod { .. } => ModI { dst, a, k },
            InplaceAdd { .. } => InplaceAddI { dst, a, k },
            Eq { .. } => EqI { dst, a, k },
            Ne { .. } => NeI { dst, a, k },
            Lt { .. } => LtI { dst, a, k },
            Le { .. } => LeI { dst, a, k },
            Gt { .. } => GtI { dst, a, k },
            _ => GeI { dst, a, k },
        })
    }
}

/// The method calls the interpreter does in place, without a builtin call
/// (see [`CallSite::in_place`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InPlace {
    /// Any other call.
    No,
    /// `x.append(y)`, on a mutable list.
    Append,
    /// `x.get(k)` or `x.get(k, default)`, on a dict, for a key that is an
    /// int or a short string.
    Get,
    /// `x.setdefault(k)` or `x.setdefault(k, default)`, as `Get`; a key
    /// absent is added when the dict may be changed.
    SetDefault,
    /// `x.startswith(s)` / `x.endswith(s)` of two strings.
    StartsWith,
    EndsWith,
    /// `x.strip()`, `x.lstrip()`, `x.rstrip()` of a string: white space.
    Strip,
    LStrip,
    RStrip,
    /// `x.lower()` / `x.upper()` of a string.
    Lower,
    Upper,
    /// `x.split(sep)` of two strings, `sep` not empty.
    Split,
    /// `x.replace(old, new)` of three strings.
    Replace,
}

/// How a call passes its arguments. The callee is `r[base]` (a method's
/// receiver is `r[recv]`);
/// then `npos` positional values, one value per name in `names`, then the
/// `*args` value if `star`, then the `**kwargs` value if `star_star`.
#[derive(Clone, Debug)]
pub struct CallSite<'h> {
    pub npos: u16,
    pub names: &'h [&'h str],
    pub star: bool,
    pub star_star: bool,
    /// Only positional arguments (no names, no `*args`, no `**kwargs`): the
    /// arguments are exactly `r[base+1..base+1+npos]`.
    pub plain: bool,
    /// A plain call of a method the interpreter does in place when the
    /// receiver is of the method's kind.
    pub in_place: InPlace,
    /// For [`Instr::CallMethod`]: the method name, and the position of its
    /// `.` where a missing attribute is reported.
    pub method: &'h str,
    pub attr_pos: Pos,
    /// For [`Instr::CallMethod`]: the method last found at this site, with
    /// the receiver kind it was found for ([`Value::tag`]; no value has
    /// the tag `u64::MAX` of the empty cache).
    pub cache: Cell<(u64, Option<&'static crate::builtins::BuiltinFn>)>,
    /// For [`Instr::CallMethod`]: the instructions `args..call` evaluate the
    /// arguments, after the receiver was put in register `recv` (the call's
    /// base, or the local that holds it). starlark-go looks the attribute up before it evaluates the
    /// arguments, so an error among those instructions is reported as the
    /// missing attribute when the receiver lacks the method (on the error
    /// path only: [`crate::interp`] checks it when an execution fails).
    pub args: u32,
    pub call: u32,
    pub recv: Reg,
    /// Argument registers the call itself fills, each from an operand (a
    /// local read in its own register, or a constant) instead of a `move`
    /// or `const` instruction of its own: `(register, operand)` pairs,
    /// copied when the call runs, before anything reads the arguments. (No
    /// argument can assign a local of the function, so the local holds at
    /// the call what it held where the argument stands.)
    pub operands: &'h [(Reg, Rk)],
}

impl CallSite<'_> {
    /// Registers used after `base` for the arguments.
    pub fn nargs(&self) -> usize {
        self.npos as usize + self.names.len() + self.star as usize + self.star_star as usize
    }
}

/// Where a new closure finds each of its free variables' cells, in the
/// frame that executes [`Instr::MakeFunction`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FreeSource {
    /// The cell in local slot `i`.
    Local(Reg),
    /// The enclosing function's own free variable `i`.
    Free(u16),
}

/// The parameters of a function, in slot order: positional-or-named ones,
/// then keyword-only ones, then `*args`, then `**kwargs`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Params<'h> {
    pub names: &'h [&'h str],
    /// Parameters that may be given by position.
    pub npositional: u16,
    /// Keyword-only parameters (after `*` or `*args`).
    pub nkwonly: u16,
    pub has_args: bool,
    pub has_kwargs: bool,
    /// For each positional and keyword-only parameter, whether it has a
    /// default value (`MakeFunction` reads those from registers in order).
    pub has_default: &'h [bool],
    /// The register of each parameter, in the order above.
    pub regs: &'h [Reg],
}

impl Params<'_> {
    /// Number of parameter slots, `*args` and `**kwargs` included.
    pub fn nslots(&self) -> usize {
        self.npositional as usize
            + self.nkwonly as usize
            + self.has_args as usize
            + self.has_kwargs as usize
    }

    /// Number of parameters with defaults.
    pub fn ndefaults(&self) -> usize {
        self.has_default.iter().filter(|d| **d).count()
    }
}

/// A compiled function (or the module's top level).
pub struct Code<'h> {
    pub name: &'h str,
    /// Position of the `def`/`lambda` keyword (0 for the top level).
    pub pos: Pos,
    /// Where starlark-go reports errors of entering the function (argument
    /// binding, recursion): its first instruction's position.
    pub entry_pos: Pos,
    pub instrs: &'h [Instr],
    /// The source position of each instruction.
    pub positions: &'h [Pos],
    pub consts: &'h [Value<'h>],
    pub sites: &'h [CallSite<'h>],
    /// The entry positions [`Instr::Index`] and [`Instr::SetIndex`] last
    /// found a string key at, one cell per site (or per group of sites, in
    /// code with more than 65,536 of them). Records built by one display hold
    /// their keys in one order, so `r["name"]` finds its key where it did
    /// for the record before; a hint is only ever a guess, checked before
    /// it is used (see [`crate::dict::DictMap::get_str_hinted`]).
    pub hints: &'h [Cell<u32>],
    /// The `%` templates of [`Instr::Percent`].
    pub templates: &'h [Template<'h>],
    /// The displays of [`Instr::MakeRecord`].
    pub records: &'h [Record<'h>],
    /// Functions defined in this one, for [`Instr::MakeFunction`].
    pub functions: &'h [&'h Code<'h>],
    pub params: Params<'h>,
    /// Locals (parameters first), then temporaries.
    pub nregs: u16,
    pub local_names: &'h [&'h str],
    /// Local slots that hold cells.
    pub cells: &'h [Reg],
    /// Names of the free variables, and where the enclosing frame finds
    /// their cells when it creates this function.
    pub freevars: &'h [(&'h str, FreeSource)],
    /// Whether a call of this code is on the stack: starlark-go forbids
    /// recursion by code, not by function value.
    pub active: Cell<bool>,
    /// The number of arguments of a call that may take the interpreter's
    /// quickest path, or [`NO_FAST_ARITY`]: set when the parameters are
    /// only positional ones without `*args`, `**kwargs` or keyword-only
    /// ones, sit in registers `0..n` in order, and no local is a cell, so
    /// that a call with exactly `n` positional arguments copies them into
    /// the callee's first registers and resets its other locals (the
    /// compiler writes every temporary before reading it).
    pub fast_arity: u16,
}

/// [`Code::fast_arity`] of code that always takes the general call path.
pub const NO_FAST_ARITY: u16 = u16::MAX;

impl Params<'_> {
    /// The [`Code::fast_arity`] these parameters allow, given the cells of
    /// the code.
    pub fn fast_arity(&self, cells: &[Reg]) -> u16 {
        let plain = !self.has_args && !self.has_kwargs && self.nkwonly == 0;
        let leading = self.regs.iter().enumerate().all(|(i, &r)| r as usize == i);
        if plain && leading && cells.is_empty() && self.npositional != NO_FAST_ARITY {
            self.npositional
        } else {
            NO_FAST_ARITY
        }
    }
}

impl Code<'_> {
    /// A readable listing of this function and the ones it defines, for
    /// tests and debugging.
    pub fn disassemble(&self) -> String {
        let mut out = String::new();
        self.disassemble_into(&mut out);
        out
    }

    fn disassemble_into(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "function {} (regs {}, locals {:?}, cells {:?}, free {:?})",
            self.name,
            self.nregs,
            self.local_names,
            self.cells,
            self.freevars.iter().map(|f| f.0).collect::<Vec<_>>()
        );
        for (pc, i) in self.instrs.iter().enumerate() {
            let _ = writeln!(out, "  {pc:4}  {}", self.render(i));
        }
        for f in self.functions {
            f.disassemble_into(out);
        }
    }

    /// The argument registers a call fills from operands, as
    /// `; r5 = r0, r6 = "k"` (nothing when there are none).
    fn operands(&self, s: &CallSite<'_>) -> String {
        let mut out = String::new();
        for (i, &(r, op)) in s.operands.iter().enumerate() {
            out.push_str(if i == 0 { "; " } else { ", " });
            out.push_str(&format!("r{r} = {}", self.rk(op)));
        }
        out
    }

    fn rk(&self, op: Rk) -> String {
        if op & RK_CONST != 0 {
            self.konst((op & !RK_CONST) as usize)
        } else {
            format!("r{op}")
        }
    }

    fn konst(&self, k: usize) -> String {
        match self.consts.get(k) {
            Some(v) => Code::konst_text(*v),
            None => format!("k{k}?"),
        }
    }

    /// How a listing shows constant `v`.
    fn konst_text(v: Value<'_>) -> String {
        match v {
            Value::None => "None".to_string(),
            Value::Bool(b) => if b { "True" } else { "False" }.to_string(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => format!("{f:?}"),
            Value::Str(s) => format!("{:?}", bstr::BStr::new(s.text)),
            Value::Tuple(t) => {
                // A constant tuple's items are constants too.
                let items: Vec<String> = t.items.iter().map(|v| Code::konst_text(*v)).collect();
                let comma = if items.len() == 1 { "," } else { "" };
                format!("({}{comma})", items.join(", "))
            }
            v => format!("<{}>", v.type_name()),
        }
    }

    fn render(&self, i: &Instr) -> String {
        use Instr::*;
        let bin = |name: &str, dst: &Reg, a: &Rk, b: &Rk| {
            format!("{name} r{dst} = {} {}", self.rk(*a), self.rk(*b))
        };
        match i {
            Move { dst, src } => format!("move r{dst} = r{src}"),
            Const { dst, k } => format!("const r{dst} = {}", self.konst(*k as usize)),
            CheckBound { reg, name } => format!("checkbound r{reg} {}", self.konst(*name as usize)),
            LoadGlobal { dst, g } => format!("loadglobal r{dst} = g{g}"),
            StoreGlobal { g, src } => format!("storeglobal g{g} = r{src}"),
            LoadCell { dst, slot } => format!("loadcell r{dst} = cell r{slot}"),
            StoreCell { slot, src } => format!("storecell cell r{slot} = r{src}"),
            LoadFree { dst, idx } => format!("loadfree r{dst} = free{idx}"),
            Add { dst, a, b } => bin("add", dst, a, b),
            Sub { dst, a, b } => bin("sub", dst, a, b),
            Mul { dst, a, b } => bin("mul", dst, a, b),
            Div { dst, a, b } => bin("div", dst, a, b),
            FloorDiv { dst, a, b } => bin("floordiv", dst, a, b),
            Mod { dst, a, b } => bin("mod", dst, a, b),
            BitAnd { dst, a, b } => bin("bitand", dst, a, b),
            BitOr { dst, a, b } => bin("bitor", dst, a, b),
            BitXor { dst, a, b } => bin("bitxor", dst, a, b),
            Shl { dst, a, b } => bin("shl", dst, a, b),
            Shr { dst, a, b } => bin("shr", dst, a, b),
            In { dst, a, b } => bin("in", dst, a, b),
            NotIn { dst, a, b } => bin("notin", dst, a, b),
            Eq { dst, a, b } => bin("eq", dst, a, b),
            Ne { dst, a, b } => bin("ne", dst, a, b),
            Lt { dst, a, b } => bin("lt", dst, a, b),
            Le { dst, a, b } => bin("le", dst, a, b),
            Gt { dst, a, b } => bin("gt", dst, a, b),
            Ge { dst, a, b } => bin("ge", dst, a, b),
            InplaceAdd { dst, a, b } => bin("inplaceadd", dst, a, b),
            InplaceOr { dst, a, b } => bin("inplaceor", dst, a, b),
            AddI { dst, a, k } => format!("add r{dst} = r{a} {k}"),
            SubI { dst, a, k } => format!("sub r{dst} = r{a} {k}"),
            MulI { dst, a, k } => format!("mul r{dst} = r{a} {k}"),
            ModI { dst, a, k } => format!("mod r{dst} = r{a} {k}"),
            InplaceAddI { dst, a, k } => format!("inplaceadd r{dst} = r{a} {k}"),
            EqI { dst, a, k } => format!("eq r{dst} = r{a} {k}"),
            NeI { dst, a, k } => format!("ne r{dst} = r{a} {k}"),
            LtI { dst, a, k } => format!("lt r{dst} = r{a} {k}"),
            LeI { dst, a, k } => format!("le r{dst} = r{a} {k}"),
            GtI { dst, a, k } => format!("gt r{dst} = r{a} {k}"),
            GeI { dst, a, k } => format!("ge r{dst} = r{a} {k}"),
            Neg { dst, src } => format!("neg r{dst} = r{src}"),
            Plus { dst, src } => format!("plus r{dst} = r{src}"),
            Invert { dst, src } => format!("invert r{dst} = r{src}"),
            Not { dst, src } => format!("not r{dst} = r{src}"),
            Jump { to } => format!("jump {to}"),
            JumpIfFalse { cond, to } => format!("jumpiffalse r{cond} {to}"),
            JumpIfTrue { cond, to } => format!("jumpiftrue r{cond} {to}"),
            IterStart { dst, src, fill } if *fill == NO_FILL => {
                format!("iterstart r{dst} = r{src}")
            }
            IterStart { dst, src, fill } => format!("iterstart r{dst} = r{src} fill r{fill}"),
            ForNext { iter, dst, body } => format!("fornext r{dst} = next r{iter} then {body}"),
            IterEnd { iter } => format!("iterend r{iter}"),
            Call { dst, base, site } => {
                let s = &self.sites[*site as usize];
                format!(
                    "call r{dst} = r{base}(npos {}, names {:?}, star {}, starstar {}{})",
                    s.npos,
                    s.names,
                    s.star,
                    s.star_star,
                    self.operands(s)
                )
            }
            CallMethod { dst, base, site } => {
                let s = &self.sites[*site as usize];
                // The arguments follow the base; the receiver is shown
                // where it is read from when that is not the base.
                let args = if s.recv == *base {
                    String::new()
                } else {
                    format!(", args r{}..", base + 1)
                };
                format!(
                    "callmethod r{dst} = r{}.{}(npos {}, names {:?}, star {}, starstar {}{args}{})",
                    s.recv,
                    s.method,
                    s.npos,
                    s.names,
                    s.star,
                    s.star_star,
                    self.operands(s)
                )
            }
            GetAttr { dst, x, name } => {
                format!("getattr r{dst} = r{x}.{}", self.konst(*name as usize))
            }
            SetAttr { x, name, src } => {
                format!("setattr r{x}.{} = r{src}", self.konst(*name as usize))
            }
            Index { dst, x, i, .. } => format!("index r{dst} = r{x}[{}]", self.rk(*i)),
            SetIndex { x, i, src, .. } => format!("setindex r{x}[{}] = r{src}", self.rk(*i)),
            Percent { dst, t, src } => {
                let t = &self.templates[*t as usize];
                let mut text = String::new();
                crate::format::write_quoted(&mut text, t.text, false);
                if t.spread {
                    format!("percent r{dst} = {text} % r{src}..+{}", t.nconv)
                } else {
                    format!("percent r{dst} = {text} % r{src}")
                }
            }
            Slice { dst, base } => format!(
                "slice r{dst} = r{base}[r{}:r{}:r{}]",
                base + 1,
                base + 2,
                base + 3
            ),
            MakeList { dst, base, n } => format!("makelist r{dst} = r{base}..+{n}"),
            MakeTuple { dst, base, n } => format!("maketuple r{dst} = r{base}..+{n}"),
            ListOf { dst, k } => format!("makelist r{dst} = items of {}", self.konst(*k as usize)),
            MakeDict { dst, n } => format!("makedict r{dst} = {{}} (room {n})"),
            DictSetUnique { dict, key, src } => format!("dictsetunique r{dict}[r{key}] = r{src}"),
            DictPushNew { dict, k, src } => {
                format!("dictpushnew r{dict}[{}] = r{src}", self.konst(*k as usize))
            }
            MakeRecord { dst, rec } => {
                let rec = &self.records[*rec as usize];
                let mut text = String::new();
                for (i, (k, src)) in rec.keys.iter().zip(rec.srcs).enumerate() {
                    if i > 0 {
                        text.push_str(", ");
                    }
                    if let Value::Str(s) = k {
                        crate::format::write_quoted(&mut text, s.text, false);
                    }
                    let _ = write!(text, ": r{src}");
                }
                format!("makerecord r{dst} = {{{text}}}")
            }
            ListAppend { list, src } => format!("listappend r{list} += r{src}"),
            DictSet { dict, key, src } => format!("dictset r{dict}[r{key}] = r{src}"),
            MakeFunction { dst, func, base } => format!(
                "makefunction r{dst} = {} defaults r{base}..",
                self.functions[*func as usize].name
            ),
            Unpack { base, src, n } => format!("unpack r{base}..+{n} = r{src}"),
            Return { src } => format!("return {}", self.rk(*src)),
            Load => "load".to_string(),
        }
    }
}
