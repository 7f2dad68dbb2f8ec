//! Per-constraint arrays of the two-way pair workspace stored over two storage bindings, so a
//! dense contact set (the 256² cloth on the sphere: about ten million pairs, 165 MB of 16-byte
//! constraints) never needs a binding larger than the device's `maxStorageBufferRange`
//! (128 MiB on lavapipe). Element `i` lives in the low buffer when `i` is below its length,
//! else at `i - lo_len` in the high one; the kernels read them through
//! `kernels/include/two_way_split.glsl`, which takes the low binding's length as the split
//! point. While everything fits one binding the high buffer is a one-element placeholder.
//! The split changes where a record is stored, never what is computed: results are
//! bit-identical however the arrays are split.

use crate::vk::{BufferUsage, Context, GpuBuffer};
use bytemuck::Pod;

/// Bindings one split array is spread over (the kernels' `_lo` / `_hi` pair).
pub const SPLIT_BINDINGS: usize = 2;

/// Element counts `[low, high]` of the two bindings that hold `len` elements of `elem_bytes`
/// bytes when one binding holds at most `max_binding_bytes`: `[len, 0]` when it fits one
/// binding, else the low binding as full as the limit allows and the rest in the high one.
/// The error names the buffer, its size and the limit when two bindings cannot hold it.
pub fn split_lengths(
    name: &str,
    len: usize,
    elem_bytes: usize,
    max_binding_bytes: u64,
) -> Result<[usize; SPLIT_BINDINGS], String> {
    let elem = elem_bytes.max(1) as u64;
    let per_binding = max_binding_bytes / elem;
    let bytes = (len as u64).saturating_mul(elem);
    if per_binding == 0 || len as u64 > per_binding.saturating_mul(SPLIT_BINDINGS as u64) {
        return Err(format!(
            "buffer '{name}' needs {bytes} bytes but {SPLIT_BINDINGS} bindings of the device's \
             maxStorageBufferRange of {max_binding_bytes} bytes hold at most {} bytes",
            per_binding * elem * SPLIT_BINDINGS as u64
        ));
    }
    if len as u64 <= per_binding {
        return Ok([len, 0]);
    }
    let lo = per_binding as usize;
    Ok([lo, len - lo])
}

/// `len` elements of `T` over two storage buffers (`name` and `name.hi`), split where one
/// binding would exceed `max_binding_bytes`.
pub struct SplitBuffer<T: Pod> {
    lo: GpuBuffer<T>,
    hi: GpuBuffer<T>,
    len: usize,
}

impl<T: Pod> SplitBuffer<T> {
    /// Allocates `len` elements (at least one) split at `max_binding_bytes` per binding
    /// ([`split_lengths`]); the error names the buffer when two bindings cannot hold it.
    pub fn new(
        ctx: &Context,
        name: &str,
        len: usize,
        max_binding_bytes: u64,
    ) -> Result<SplitBuffer<T>, String> {
        let len = len.max(1);
        let [lo_len, hi_len] =
            split_lengths(name, len, std::mem::size_of::<T>(), max_binding_bytes)?;
        let storage = BufferUsage::STORAGE;
        let lo = ctx
            .create_buffer(name, lo_len, storage)
            .map_err(|e| e.to_string())?;
        let hi = ctx
            .create_buffer(&format!("{name}.hi"), hi_len.max(1), storage)
            .map_err(|e| e.to_string())?;
        Ok(SplitBuffer { lo, hi, len })
    }

    /// The low binding (elements `0..lo_len`).
    pub fn lo(&self) -> &GpuBuffer<T> {
        &self.lo
    }

    /// The high binding (elements `lo_len..len`; a one-element placeholder when not split).
    pub fn hi(&self) -> &GpuBuffer<T> {
        &self.hi
    }

    /// Elements held (the capacity of the array).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always false: at least one element is allocated.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Elements in the low binding.
    pub fn lo_len(&self) -> usize {
        self.lo.len()
    }

    /// Whether the high binding holds elements.
    pub fn is_split(&self) -> bool {
        self.len > self.lo.len()
    }

    /// Bytes allocated on the device (both buffers).
    pub fn device_bytes(&self) -> u64 {
        self.lo.byte_len() + self.hi.byte_len()
    }

    /// Reads elements `0..out.len()` back into `out`.
    pub fn read_into(&self, out: &mut [T]) -> Result<(), String> {
        if out.len() > self.len {
            return Err(format!(
                "reading {} elements of a split buffer of {}",
                out.len(),
                self.len
            ));
        }
        let n_lo = out.len().min(self.lo.len());
        let (lo, hi) = out.split_at_mut(n_lo);
        self.lo.read_into(lo).map_err(|e| e.to_string())?;
        self.hi.read_into(hi).map_err(|e| e.to_string())
    }

    /// Reads the first `n` elements back.
    pub fn read_prefix(&self, n: usize) -> Result<Vec<T>, String> {
        let mut v = vec![T::zeroed(); n];
        self.read_into(&mut v)?;
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_that_fit_one_binding_stay_whole() {
        assert_eq!(split_lengths("a", 100, 16, 1600).unwrap(), [100, 0]);
        assert_eq!(split_lengths("a", 0, 16, 1600).unwrap(), [0, 0]);
    }

    #[test]
    fn larger_arrays_fill_the_low_binding_first() {
        assert_eq!(split_lengths("a", 101, 16, 1600).unwrap(), [100, 1]);
        assert_eq!(split_lengths("a", 200, 16, 1600).unwrap(), [100, 100]);
        // A limit that is not a multiple of the element size rounds down.
        assert_eq!(split_lengths("a", 150, 16, 1615).unwrap(), [100, 50]);
        // The 256² cloth's constraints on lavapipe's 128 MiB bindings.
        let [lo, hi] = split_lengths("c", 10_330_236, 16, 1 << 27).unwrap();
        assert_eq!((lo, hi), (8_388_608, 10_330_236 - 8_388_608));
        assert!(16 * lo as u64 <= 1 << 27 && 16 * hi as u64 <= 1 << 27);
    }

    #[test]
    fn arrays_past_two_bindings_are_refused_naming_the_buffer_size_and_limit() {
        let e = split_lengths("two_way.constraints", 201, 16, 1600).unwrap_err();
        assert!(e.contains("'two_way.constraints'"), "{e}");
        assert!(e.contains("3216 bytes"), "{e}");
        assert!(e.contains("maxStorageBufferRange of 1600 bytes"), "{e}");
        assert!(split_lengths("x", 1, 16, 8).is_err());
    }
}
