//! Reference LSD radix sort, pass by pass as the GPU does it (histogram, exclusive scan, stable
//! scatter), with 8- to 11-bit digits.

/// One stable counting-sort pass on the `bits`-bit digit at `shift`.
pub fn radix_pass<K: Copy + Into<u64>>(
    keys: &[K],
    values: &[u32],
    shift: u32,
    bits: u32,
) -> (Vec<K>, Vec<u32>) {
    let radix = 1usize << bits;
    let digit = |k: K| ((k.into() >> shift) as usize) & (radix - 1);
    let mut count = vec![0usize; radix];
    for &k in keys {
        count[digit(k)] += 1;
    }
    let mut offset = vec![0usize; radix];
    let mut acc = 0;
    for d in 0..radix {
        offset[d] = acc;
        acc += count[d];
    }
    let mut out_k = keys.to_vec();
    let mut out_v = values.to_vec();
    for (i, &k) in keys.iter().enumerate() {
        let d = digit(k);
        out_k[offset[d]] = k;
        out_v[offset[d]] = values[i];
        offset[d] += 1;
    }
    (out_k, out_v)
}

/// Stable sort of (key, value) pairs by the low `key_bits` bits of the key (8-bit digits).
pub fn radix_sort<K: Copy + Into<u64>>(
    keys: &[K],
    values: &[u32],
    key_bits: u32,
) -> (Vec<K>, Vec<u32>) {
    radix_sort_digits(keys, values, key_bits, 8)
}

/// [`radix_sort`] with `bits`-bit digits: `ceil(key_bits / bits)` passes.
pub fn radix_sort_digits<K: Copy + Into<u64>>(
    keys: &[K],
    values: &[u32],
    key_bits: u32,
    bits: u32,
) -> (Vec<K>, Vec<u32>) {
    let (mut k, mut v) = (keys.to_vec(), values.to_vec());
    for pass in 0..key_bits.div_ceil(bits) {
        (k, v) = radix_pass(&k, &v, pass * bits, bits);
    }
    (k, v)
}
