//! Reference LSD radix sort with 8-bit digits, pass by pass as the GPU does it (histogram,
//! exclusive scan, stable scatter).

/// One stable counting-sort pass on the 8-bit digit at `shift`.
pub fn radix_pass<K: Copy + Into<u64>>(
    keys: &[K],
    values: &[u32],
    shift: u32,
) -> (Vec<K>, Vec<u32>) {
    let digit = |k: K| ((k.into() >> shift) & 0xff) as usize;
    let mut count = [0usize; 256];
    for &k in keys {
        count[digit(k)] += 1;
    }
    let mut offset = [0usize; 256];
    let mut acc = 0;
    for d in 0..256 {
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

/// Stable sort of (key, value) pairs by the low `key_bits` bits of the key.
pub fn radix_sort<K: Copy + Into<u64>>(
    keys: &[K],
    values: &[u32],
    key_bits: u32,
) -> (Vec<K>, Vec<u32>) {
    let (mut k, mut v) = (keys.to_vec(), values.to_vec());
    for pass in 0..key_bits.div_ceil(8) {
        (k, v) = radix_pass(&k, &v, pass * 8);
    }
    (k, v)
}
