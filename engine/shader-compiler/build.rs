//! Links the static glslang / SPIRV-Tools libraries that Debian's `libshaderc_combined.a` needs.
//! (shaderc-sys links `shaderc_combined`; glslang and SPIRV-Tools are left to us.)
fn main() {
    println!("cargo:rerun-if-env-changed=SHADERC_LIB_DIR");
    let dir =
        std::env::var("SHADERC_LIB_DIR").unwrap_or_else(|_| "/usr/lib/x86_64-linux-gnu".into());
    println!("cargo:rustc-link-search=native={dir}");
    // Newer glslang releases fold some of these into libglslang; link only the ones present.
    for lib in [
        "SPIRV",
        "glslang",
        "MachineIndependent",
        "GenericCodeGen",
        "OGLCompiler",
        "OSDependent",
        "SPIRV-Tools-opt",
        "SPIRV-Tools",
    ] {
        if std::path::Path::new(&dir)
            .join(format!("lib{lib}.a"))
            .exists()
        {
            println!("cargo:rustc-link-lib=static={lib}");
        }
    }
    println!("cargo:rustc-link-lib=dylib=stdc++");
}
