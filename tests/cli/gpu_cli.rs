//! `supple devices --json` and `supple bench primitives --json`: one valid JSON object on stdout
//! with the documented fields.
use std::process::Command;

fn supple(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_supple"))
        .args(args)
        .output()
        .expect("run supple");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn devices_json_names_the_device_and_its_capabilities() {
    let (code, stdout, stderr) = supple(&["devices", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object on stdout");
    let devices = v["devices"].as_array().expect("devices list");
    assert!(!devices.is_empty());
    let selected = v["selected"].as_u64().expect("a selected device") as usize;
    let d = &devices[selected];
    assert!(d["name"].as_str().is_some_and(|n| !n.is_empty()));
    for key in [
        "subgroup_size",
        "f32_atomic_add",
        "f64_atomic_add",
        "f64",
        "timestamps",
        "timestamp_period_ns",
        "max_storage_buffer_range",
        "max_push_constants_size",
    ] {
        assert!(!d[key].is_null(), "missing {key} in {d}");
    }
    if std::env::var("VK_DRIVER_FILES").is_ok_and(|f| f.contains("lvp")) {
        assert!(d["name"].as_str().unwrap().contains("llvmpipe"), "{d}");
    }
}

#[test]
fn bench_primitives_json_has_the_documented_fields() {
    let (code, stdout, stderr) = supple(&[
        "bench",
        "primitives",
        "--json",
        "--sizes",
        "4k,64k",
        "--repeat",
        "1",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let v: serde_json::Value =
        serde_json::from_str(stdout.trim()).expect("one JSON object on stdout");
    assert!(v["device"].as_str().is_some_and(|s| !s.is_empty()));
    for key in [
        "copy_gbps",
        "transfer_copy_gbps",
        "dispatch_overhead_us",
        "cpu_sort_unstable_elements_per_s",
    ] {
        assert!(v[key].as_f64().is_some_and(|x| x > 0.0), "{key} in {v}");
    }
    let results = v["results"].as_array().expect("results");
    for p in [
        "scan",
        "reduce",
        "compact",
        "radix_sort_u32",
        "radix_sort_u64",
    ] {
        for n in [4096, 65536] {
            let r = results
                .iter()
                .find(|r| r["primitive"] == p && r["n"] == n)
                .unwrap_or_else(|| panic!("{p} n={n} missing"));
            assert!(
                r["elements_per_s"].as_f64().is_some_and(|x| x > 0.0)
                    && r["gbps"].as_f64().is_some_and(|x| x > 0.0),
                "{r}"
            );
        }
    }
}

#[test]
fn bad_arguments_are_refused() {
    let (code, _, stderr) = supple(&["bench", "primitives", "--sizes", "12Q"]);
    assert_ne!(code, 0);
    assert!(stderr.contains("--sizes"), "{stderr}");
}
