//! Buffer upload/readback through the mapped and the staging paths.
use supple::vk::BufferUsage;
use supple_gpu_tests::{assert_no_validation_errors, context};

#[test]
fn upload_readback_roundtrip_both_paths() {
    for staging in [false, true] {
        let ctx = context(staging);
        assert_eq!(ctx.uses_staging(), staging || !ctx.caps().unified_memory);
        let data: Vec<u32> = (0..10_007u32).map(|i| i.wrapping_mul(2654435761)).collect();
        let b = ctx
            .upload_buffer("roundtrip", &data, BufferUsage::STORAGE)
            .unwrap();
        assert_eq!(b.read().unwrap(), data);
        b.write_at(5, &[1, 2, 3]).unwrap();
        let back = b.read().unwrap();
        assert_eq!(&back[5..8], &[1, 2, 3]);
        assert_eq!(back[4], data[4]);
        assert!(
            b.write_at(10_006, &[1, 2]).is_err(),
            "out-of-range write must fail"
        );
        drop(b);
        assert_no_validation_errors(&ctx);
    }
}

#[test]
fn buffer_over_max_storage_range_is_a_clear_error() {
    let ctx = context(false);
    let too_many = (ctx.caps().max_storage_buffer_range / 4 + 16) as usize;
    let e = ctx
        .create_buffer::<u32>("huge", too_many, BufferUsage::STORAGE)
        .unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("huge") && msg.contains("maxStorageBufferRange"),
        "{msg}"
    );
}
