//! Parameter and readback rings, the persisted pipeline cache, and runtime recompilation.
use supple::vk::{
    ids, BufferUsage, CompileOptions, Context, Dispatch, Graph, ParamRing, ReadbackRing,
};
use supple_gpu_tests::{assert_no_validation_errors, context};

fn increment(
    g: &mut Graph,
    src: &supple::vk::GpuBuffer<u32>,
    dst: &supple::vk::GpuBuffer<u32>,
    n: u32,
) {
    g.dispatch(
        Dispatch::new("inc", ids::TEST_INCREMENT, [n.div_ceil(64), 1, 1])
            .workgroup_size(64)
            .read(src)
            .write(dst)
            .push(&n),
    );
}

#[test]
fn param_and_readback_rings_alternate_slots_without_allocation() {
    let ctx = context(true);
    let params: ParamRing<u32> = ParamRing::new(&ctx, "params", 2).unwrap();
    let ring: ReadbackRing<u32> = ReadbackRing::new(&ctx, "readback", 1, 2).unwrap();
    let work = ctx
        .create_buffer::<u32>("work", 1, BufferUsage::STORAGE)
        .unwrap();
    // One compiled graph per slot: params[i] + 1 -> work -> readback[i].
    let graphs: Vec<_> = (0..2)
        .map(|i| {
            let mut g = Graph::new(format!("slot{i}"));
            increment(&mut g, params.slot(i), &work, 1);
            g.copy("readback", &work, ring.slot(i));
            g.compile(&ctx, CompileOptions::default()).unwrap()
        })
        .collect();
    let mut tickets = [None, None];
    for frame in 0..6usize {
        let slot = frame % 2;
        if let Some(t) = tickets[slot].take() {
            graphs[slot].wait(t).unwrap();
            assert_eq!(
                ring.view(slot)[0],
                (frame as u32 - 2) * 10 + 1,
                "frame {frame}"
            );
        }
        params.write(slot, &(frame as u32 * 10)).unwrap();
        tickets[slot] = Some(graphs[slot].submit().unwrap());
    }
    for slot in 0..2 {
        graphs[slot].wait(tickets[slot].unwrap()).unwrap();
        assert_eq!(ring.view(slot)[0], (4 + slot as u32) * 10 + 1);
    }
    drop(graphs);
    assert_no_validation_errors(&ctx);
}

#[test]
fn pipeline_cache_is_persisted_and_reloaded() {
    let dir = std::env::temp_dir().join(format!("supple-cache-test-{}", std::process::id()));
    let path = dir.join("pipeline-cache.bin");
    let _ = std::fs::remove_dir_all(&dir);
    for round in 0..2 {
        let mut o = supple::ContextOptions::from_env();
        o.validation = true;
        o.pipeline_cache = Some(path.clone());
        let ctx = Context::new(o).unwrap();
        let a = ctx
            .upload_buffer("a", &[1u32; 8], BufferUsage::STORAGE)
            .unwrap();
        let b = ctx
            .create_buffer::<u32>("b", 8, BufferUsage::STORAGE)
            .unwrap();
        let mut g = Graph::new("cached");
        increment(&mut g, &a, &b, 8);
        g.compile(&ctx, CompileOptions::default())
            .unwrap()
            .run()
            .unwrap();
        assert_eq!(b.read().unwrap(), vec![2u32; 8], "round {round}");
        assert_no_validation_errors(&ctx);
        // The graph holds the buffers, which hold the device: the cache is saved when the last goes.
        drop((g, a, b, ctx));
        let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        assert!(
            len > 16,
            "round {round}: pipeline cache written at teardown ({len} bytes)"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn kernels_recompile_from_source_at_run_time() {
    // Copy kernels/ and change the increment kernel to add 2: the run must see the change.
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernels");
    let dir = std::env::temp_dir().join(format!("supple-kernels-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for sub in ["include", "test"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
        for e in std::fs::read_dir(src.join(sub)).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), dir.join(sub).join(e.file_name())).unwrap();
        }
    }
    let inc = dir.join("test/increment.comp");
    let text = std::fs::read_to_string(&inc)
        .unwrap()
        .replace("src[i] + 1u", "src[i] + 2u");
    std::fs::write(&inc, text).unwrap();
    let mut o = supple::ContextOptions::from_env();
    o.validation = true;
    o.pipeline_cache = None;
    o.kernel_source_dir = Some(dir.clone());
    let ctx = Context::new(o).unwrap();
    let a = ctx
        .upload_buffer("a", &[5u32; 4], BufferUsage::STORAGE)
        .unwrap();
    let b = ctx
        .create_buffer::<u32>("b", 4, BufferUsage::STORAGE)
        .unwrap();
    let mut g = Graph::new("recompiled");
    increment(&mut g, &a, &b, 4);
    g.compile(&ctx, CompileOptions::default())
        .unwrap()
        .run()
        .unwrap();
    assert_eq!(b.read().unwrap(), vec![7u32; 4]);
    // A broken source is a clear error naming the file and line, not a panic.
    std::fs::write(&inc, "#version 460\nvoid main() { nope; }\n").unwrap();
    let mut o = supple::ContextOptions::from_env();
    o.pipeline_cache = None;
    o.kernel_source_dir = Some(dir.clone());
    let ctx2 = Context::new(o).unwrap();
    let a2 = ctx2
        .upload_buffer("a", &[5u32; 4], BufferUsage::STORAGE)
        .unwrap();
    let b2 = ctx2
        .create_buffer::<u32>("b", 4, BufferUsage::STORAGE)
        .unwrap();
    let mut g = Graph::new("broken");
    increment(&mut g, &a2, &b2, 4);
    let e = g
        .compile(&ctx2, CompileOptions::default())
        .err()
        .expect("compile error")
        .to_string();
    assert!(e.contains("increment.comp:2"), "{e}");
    assert_no_validation_errors(&ctx);
    let _ = std::fs::remove_dir_all(&dir);
}
