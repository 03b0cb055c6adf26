//! The hashers of the front end and the VM, in one place: fast, seeded
//! word hashers for short keys, where SipHash (the standard library's
//! default) costs several times more per key.
//!
//! - [`SeededHash`] builds [`FxHasher`]s, rustc's multiply-rotate hash over
//!   8-byte words, for the resolver's tables keyed by identifier text
//!   (identifiers are hashed several times per use).
//! - [`KeyHash`] builds [`KeyHasher`]s, one seeded folded multiply, for
//!   keys that already are one integer (the resolver's (block, name)
//!   pairs).
//! - [`FastHasher`] is the VM's hasher of dict keys: the same kind of round
//!   per word and a full-avalanche finalizer, because the dict's index
//!   takes the low bits of the hash.
//!
//! Every one is seeded per process by its user, so that a hostile program
//! cannot precompute colliding names or keys. [`tail_word`] reads the last
//! few bytes of a text as one word, with fixed-size loads: copying a tail
//! of variable length into a zeroed word is a `memcpy` whose byte stores
//! the word's load then waits for (a failed store-to-load forward on every
//! hash).

use std::hash::{BuildHasher, Hasher};
use std::marker::PhantomData;

/// Builds hashers of type `H` whose state starts at a seed.
pub struct Seeded<H> {
    seed: u64,
    hasher: PhantomData<fn() -> H>,
}

impl<H> Seeded<H> {
    /// The builder of hashers seeded with `seed`.
    pub const fn new(seed: u64) -> Self {
        Seeded {
            seed,
            hasher: PhantomData,
        }
    }

    /// The seed.
    pub const fn seed(&self) -> u64 {
        self.seed
    }
}

impl<H> Clone for Seeded<H> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<H> Copy for Seeded<H> {}

impl<H: Hasher + From<u64>> BuildHasher for Seeded<H> {
    type Hasher = H;
    fn build_hasher(&self) -> H {
        H::from(self.seed)
    }
}

/// Builds the [`FxHasher`]s of the resolver's tables keyed by text.
pub type SeededHash = Seeded<FxHasher>;

/// Builds the [`KeyHasher`]s of keys that are one `u64`.
pub type KeyHash = Seeded<KeyHasher>;

/// The multiply-rotate hash of rustc ("Fx"), over 8-byte words; the state
/// is the seed at first.
pub struct FxHasher(pub u64);

impl FxHasher {
    const K: u64 = 0x517c_c1b7_2722_0a95;

    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(Self::K);
    }
}

impl From<u64> for FxHasher {
    fn from(seed: u64) -> Self {
        FxHasher(seed)
    }
}

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let rest = whole_words(bytes, |word| self.add(word));
        // Most names are shorter than a word: their tail is all of them.
        if !rest.is_empty() {
            self.add(tail_word(rest));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A hasher of keys that are one `u64`: one seeded folded multiply, which
/// mixes every bit of the key into the bucket index and the tag (a plain
/// multiply would leave the index a function of the key's low bits alone).
pub struct KeyHasher(pub u64);

impl From<u64> for KeyHasher {
    fn from(seed: u64) -> Self {
        KeyHasher(seed)
    }
}

impl Hasher for KeyHasher {
    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used; stay correct for anything else.
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    #[inline]
    fn write_u64(&mut self, k: u64) {
        let p = u128::from(k ^ self.0) * u128::from(FxHasher::K);
        self.0 = (p as u64) ^ ((p >> 64) as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// A fast seeded hasher for dict keys: a multiply-rotate round per word
/// and a full-avalanche finalizer (SipHash cost 3x more per key here, and
/// dict keys are mostly small ints and short strings); the state is the
/// seed at first.
pub struct FastHasher(pub u64);

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let rest = whole_words(bytes, |word| self.write_u64(word));
        if !rest.is_empty() {
            self.write_u64(tail_word(rest) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u64(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(23) ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    #[inline]
    fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Feeds the whole 8-byte words of `bytes` to `add` (little-endian) and
/// returns the 0 to 7 bytes left.
#[inline(always)]
fn whole_words(bytes: &[u8], mut add: impl FnMut(u64)) -> &[u8] {
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        add(u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8])));
    }
    chunks.remainder()
}

/// The bytes of `rest` (at most 8) as a word in which every byte takes
/// part: two 4-byte loads (overlapping below 8 bytes), or for 1 to 3 bytes
/// the first, middle and last. Texts of the same length give the same word
/// exactly when they are equal; the caller mixes in the length when it
/// matters. 0 for no bytes.
#[inline]
pub fn tail_word(rest: &[u8]) -> u64 {
    let n = rest.len();
    let half = |i: usize| {
        u64::from(u32::from_le_bytes(
            rest[i..i + 4].try_into().unwrap_or([0; 4]),
        ))
    };
    match n {
        0 => 0,
        4.. => half(0) | half(n - 4) << 32,
        _ => u64::from(rest[0]) | u64::from(rest[n / 2]) << 8 | u64::from(rest[n - 1]) << 16,
    }
}
