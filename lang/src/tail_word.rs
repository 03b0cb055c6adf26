//! The last few bytes of a string as one word, for the hashers of names
//! (here) and of dict keys (in the VM). Copying a tail of variable length
//! into a zeroed word is a `memcpy` call whose byte stores the word's load
//! then waits for (a failed store-to-load forward on every hash); this
//! reads it with fixed-size loads instead, which may overlap.

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
