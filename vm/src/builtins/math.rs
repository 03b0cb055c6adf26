//! The `math` module, as starlark-go's `lib/math`.
//!
//! Functions take ints (any size; a huge one becomes an infinite float) or
//! floats and follow Go's `math` package: a domain error gives `nan` or
//! `±inf`, not an error. `ceil` and `floor` return ints; `round` rounds
//! half away from zero and returns a float; `mod` is Go's `math.Mod` (the
//! dividend's sign). Go's `Gamma` and `Remainder` have no Rust standard
//! counterpart and are written out here after Go's algorithms.

use super::args::{pos_err, positional};
use super::{Args, BuiltinFn, ModuleDef, ModuleMember};
use crate::error::{Error, Result};
use crate::interp::Thread;
use crate::ops;
use crate::value::Value;
use std::f64::consts::PI;

macro_rules! unary {
    ($id:ident, $name:literal, $f:expr) => {
        static $id: BuiltinFn = {
            fn call<'h>(_: &mut Thread<'h>, a: &Args<'h, '_>) -> Result<Value<'h>> {
                unary_call(a, $name, $f)
            }
            BuiltinFn { name: $name, call }
        };
    };
}

macro_rules! binary {
    ($id:ident, $name:literal, $f:expr) => {
        static $id: BuiltinFn = {
            fn call<'h>(_: &mut Thread<'h>, a: &Args<'h, '_>) -> Result<Value<'h>> {
                binary_call(a, $name, $f)
            }
            BuiltinFn { name: $name, call }
        };
    };
}

unary!(ACOS, "acos", f64::acos);
unary!(ACOSH, "acosh", f64::acosh);
unary!(ASIN, "asin", f64::asin);
unary!(ASINH, "asinh", f64::asinh);
unary!(ATAN, "atan", f64::atan);
binary!(ATAN2, "atan2", f64::atan2);
unary!(ATANH, "atanh", f64::atanh);
static CEIL: BuiltinFn = BuiltinFn {
    name: "ceil",
    call: ceil,
};
binary!(COPYSIGN, "copysign", f64::copysign);
unary!(COS, "cos", f64::cos);
unary!(COSH, "cosh", f64::cosh);
unary!(DEGREES, "degrees", |x| 360.0 * x / (2.0 * PI));
unary!(EXP, "exp", f64::exp);
unary!(FABS, "fabs", f64::abs);
static FLOOR: BuiltinFn = BuiltinFn {
    name: "floor",
    call: floor,
};
unary!(GAMMA, "gamma", gamma);
binary!(HYPOT, "hypot", f64::hypot);
static LOG: BuiltinFn = BuiltinFn {
    name: "log",
    call: log,
};
binary!(MOD, "mod", |x, y| x % y);
binary!(POW, "pow", pow);
unary!(RADIANS, "radians", |x| 2.0 * PI * x / 360.0);
binary!(REMAINDER, "remainder", remainder);
unary!(ROUND, "round", f64::round);
unary!(SIN, "sin", f64::sin);
unary!(SINH, "sinh", f64::sinh);
unary!(SQRT, "sqrt", f64::sqrt);
unary!(TAN, "tan", f64::tan);
unary!(TANH, "tanh", f64::tanh);

/// The `math` module value.
pub static MODULE: ModuleDef = ModuleDef {
    name: "math",
    members: &[
        ("acos", ModuleMember::Function(&ACOS)),
        ("acosh", ModuleMember::Function(&ACOSH)),
        ("asin", ModuleMember::Function(&ASIN)),
        ("asinh", ModuleMember::Function(&ASINH)),
        ("atan", ModuleMember::Function(&ATAN)),
        ("atan2", ModuleMember::Function(&ATAN2)),
        ("atanh", ModuleMember::Function(&ATANH)),
        ("ceil", ModuleMember::Function(&CEIL)),
        ("copysign", ModuleMember::Function(&COPYSIGN)),
        ("cos", ModuleMember::Function(&COS)),
        ("cosh", ModuleMember::Function(&COSH)),
        ("degrees", ModuleMember::Function(&DEGREES)),
        ("e", ModuleMember::Float(std::f64::consts::E)),
        ("exp", ModuleMember::Function(&EXP)),
        ("fabs", ModuleMember::Function(&FABS)),
        ("floor", ModuleMember::Function(&FLOOR)),
        ("gamma", ModuleMember::Function(&GAMMA)),
        ("hypot", ModuleMember::Function(&HYPOT)),
        ("log", ModuleMember::Function(&LOG)),
        ("mod", ModuleMember::Function(&MOD)),
        ("pi", ModuleMember::Float(PI)),
        ("pow", ModuleMember::Function(&POW)),
        ("radians", ModuleMember::Function(&RADIANS)),
        ("remainder", ModuleMember::Function(&REMAINDER)),
        ("round", ModuleMember::Function(&ROUND)),
        ("sin", ModuleMember::Function(&SIN)),
        ("sinh", ModuleMember::Function(&SINH)),
        ("sqrt", ModuleMember::Function(&SQRT)),
        ("tan", ModuleMember::Function(&TAN)),
        ("tanh", ModuleMember::Function(&TANH)),
    ],
};

/// starlark-go's `floatOrInt` unpacking of positional argument `i`.
fn float_arg(name: &str, p: &[Value<'_>], i: usize) -> Result<f64> {
    match p[i] {
        v @ (Value::Int(_) | Value::BigInt(_) | Value::Float(_)) => {
            Ok(ops::as_float(v).unwrap_or(f64::NAN))
        }
        v => Err(pos_err(
            name,
            i,
            format!("got {}, want float or int", v.type_name()),
        )),
    }
}

fn unary_call<'h>(a: &Args<'h, '_>, name: &str, f: fn(f64) -> f64) -> Result<Value<'h>> {
    let p = positional(name, a, 1, 1)?;
    Ok(Value::Float(f(float_arg(name, p, 0)?)))
}

fn binary_call<'h>(a: &Args<'h, '_>, name: &str, f: fn(f64, f64) -> f64) -> Result<Value<'h>> {
    let p = positional(name, a, 2, 2)?;
    Ok(Value::Float(f(
        float_arg(name, p, 0)?,
        float_arg(name, p, 1)?,
    )))
}

fn log<'h>(_: &mut Thread<'h>, a: &Args<'h, '_>) -> Result<Value<'h>> {
    let p = positional("log", a, 1, 2)?;
    let x = float_arg("log", p, 0)?;
    let base = if p.len() > 1 {
        float_arg("log", p, 1)?
    } else {
        std::f64::consts::E
    };
    if base == 1.0 {
        return Err(Error::msg("division by zero"));
    }
    Ok(Value::Float(x.ln() / base.ln()))
}

fn round_to_int<'h>(
    th: &Thread<'h>,
    a: &Args<'h, '_>,
    name: &str,
    f: fn(f64) -> f64,
) -> Result<Value<'h>> {
    let p = positional(name, a, 1, 1)?;
    match p[0] {
        v @ (Value::Int(_) | Value::BigInt(_)) => Ok(v),
        Value::Float(x) => ops::number_to_int(th.heap, Value::Float(f(x))),
        v => Err(Error::msg(format!(
            "got {}, want float or int",
            v.type_name()
        ))),
    }
}

fn ceil<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> Result<Value<'h>> {
    round_to_int(th, a, "ceil", f64::ceil)
}

fn floor<'h>(th: &mut Thread<'h>, a: &Args<'h, '_>) -> Result<Value<'h>> {
    round_to_int(th, a, "floor", f64::floor)
}

/// Go's `math.Pow`, whose special cases C's `pow` shares, except that Go
/// answers `pow(-1, ±inf)` with 1 as well.
fn pow(x: f64, y: f64) -> f64 {
    x.powf(y)
}

/// Go's `math.Remainder`: the IEEE 754 remainder `x - n*y` with `n` the
/// integer nearest `x/y` (ties to even), computed exactly.
fn remainder(x: f64, y: f64) -> f64 {
    const TINY: f64 = 4.450_147_717_014_403e-308;
    const HALF_MAX: f64 = f64::MAX / 2.0;
    if x.is_nan() || y.is_nan() || x.is_infinite() || y == 0.0 {
        return f64::NAN;
    }
    if y.is_infinite() {
        return x;
    }
    let sign = x < 0.0;
    let (mut x, y) = (x.abs(), y.abs());
    if x == y {
        return if sign { -0.0 } else { 0.0 };
    }
    if y <= HALF_MAX {
        x %= y + y;
    }
    if y < TINY {
        if x + x > y {
            x -= y;
            if x + x >= y {
                x -= y;
            }
        }
    } else {
        let half = 0.5 * y;
        if x > half {
            x -= y;
            if x >= half {
                x -= y;
            }
        }
    }
    if sign {
        -x
    } else {
        x
    }
}

/// Coefficients of the rational approximation of Gamma on [2, 3] and of
/// the Stirling series (Cephes, as Go's `math.Gamma` uses them).
const GAM_P: [f64; 7] = [
    1.601_195_224_767_518_5e-4,
    1.191_351_470_065_863_8e-3,
    1.042_137_975_617_615_7e-2,
    4.763_678_004_571_372e-2,
    2.074_482_276_484_359_8e-1,
    4.942_148_268_014_971e-1,
    1.0,
];
const GAM_Q: [f64; 8] = [
    -2.315_818_733_241_201_4e-5,
    5.396_055_804_933_034e-4,
    -4.456_419_138_517_972e-3,
    1.181_397_852_220_604_3e-2,
    3.582_363_986_054_986_5e-2,
    -2.345_917_957_182_433_5e-1,
    7.143_049_170_302_73e-2,
    1.0,
];
const GAM_S: [f64; 5] = [
    7.873_113_957_930_936e-4,
    -2.295_499_616_133_781_3e-4,
    -2.681_326_178_057_812_4e-3,
    3.472_222_216_054_586_6e-3,
    8.333_333_333_334_822e-2,
];

fn poly(c: &[f64], x: f64) -> f64 {
    c.iter().fold(0.0, |acc, k| acc * x + k)
}

/// Stirling's formula for x >= 33, as two factors whose product is
/// Gamma(x) (kept apart to avoid overflow for 172 <= x <= 180).
fn stirling(x: f64) -> (f64, f64) {
    if x > 200.0 {
        return (f64::INFINITY, 1.0);
    }
    const SQRT_TWO_PI: f64 = 2.506_628_274_631_000_7;
    const MAX_STIRLING: f64 = 143.01608;
    let w = 1.0 / x;
    let w = 1.0 + w * poly(&GAM_S, w);
    let mut y1 = x.exp();
    let mut y2 = 1.0;
    if x > MAX_STIRLING {
        let v = x.powf(0.5 * x - 0.25);
        y2 = v / y1;
        y1 = v;
    } else {
        y1 = x.powf(x - 0.5) / y1;
    }
    (y1, SQRT_TWO_PI * w * y2)
}

/// Go's `math.Gamma`.
fn gamma(x: f64) -> f64 {
    const EULER: f64 = 0.577_215_664_901_532_9;
    let neg_int = x < 0.0 && x.fract() == 0.0;
    if neg_int || x == f64::NEG_INFINITY || x.is_nan() {
        return f64::NAN;
    }
    if x == f64::INFINITY {
        return f64::INFINITY;
    }
    if x == 0.0 {
        return if x.is_sign_negative() {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    let q = x.abs();
    let mut p = q.floor();
    if q > 33.0 {
        if x >= 0.0 {
            let (y1, y2) = stirling(x);
            return y1 * y2;
        }
        // Not an integer, so |x| < 2^63 and p fits an i64.
        let signgam = if (p as i64) & 1 == 0 { -1.0 } else { 1.0 };
        let mut z = q - p;
        if z > 0.5 {
            p += 1.0;
            z = q - p;
        }
        z = q * (PI * z).sin();
        if z == 0.0 {
            return signgam * f64::INFINITY;
        }
        let (sq1, sq2) = stirling(q);
        let absz = z.abs();
        let d = absz * sq1 * sq2;
        let z = if d.is_infinite() {
            PI / absz / sq1 / sq2
        } else {
            PI / d
        };
        return signgam * z;
    }
    let mut x = x;
    let mut z = 1.0;
    while x >= 3.0 {
        x -= 1.0;
        z *= x;
    }
    let small = |x: f64, z: f64| {
        if x == 0.0 {
            f64::INFINITY
        } else {
            z / ((1.0 + EULER * x) * x)
        }
    };
    while x < 0.0 {
        if x > -1e-9 {
            return small(x, z);
        }
        z /= x;
        x += 1.0;
    }
    while x < 2.0 {
        if x < 1e-9 {
            return small(x, z);
        }
        z /= x;
        x += 1.0;
    }
    if x == 2.0 {
        return z;
    }
    let x = x - 2.0;
    z * poly(&GAM_P, x) / poly(&GAM_Q, x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gamma_values() {
        assert_eq!(gamma(5.0), 24.0);
        assert_eq!(gamma(1.0), 1.0);
        assert!((gamma(0.5) - PI.sqrt()).abs() < 1e-15);
        assert!(gamma(-1.0).is_nan());
        assert_eq!(gamma(0.0), f64::INFINITY);
        assert_eq!(gamma(-0.0), f64::NEG_INFINITY);
        assert!((gamma(-1.5) - 2.363_271_801_207_355).abs() < 1e-14);
        assert!((gamma(40.0) / 2.039_788_208_119_744_2e46 - 1.0).abs() < 1e-14);
        assert_eq!(gamma(172.0), f64::INFINITY);
    }

    #[test]
    fn remainder_values() {
        assert_eq!(remainder(5.0, 2.0), 1.0);
        assert_eq!(remainder(7.0, 2.0), -1.0);
        assert_eq!(remainder(-7.0, 2.0), 1.0);
        assert_eq!(remainder(10.0, 3.0), 1.0);
        assert_eq!(remainder(11.0, 3.0), -1.0);
        assert!(remainder(1.0, 0.0).is_nan());
        assert_eq!(remainder(1.0, f64::INFINITY), 1.0);
    }
}
