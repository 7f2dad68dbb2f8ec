//! Host math aliases (nalgebra), used throughout the engine so types read the same everywhere,
//! and the packing of host vectors into the kernels' vec4 layout.

/// 3-vector of f64 (host-side geometry, metres).
pub type Vec3 = nalgebra::Vector3<f64>;
/// 3-vector of f32 (mirrors GPU storage).
pub type Vec3f = nalgebra::Vector3<f32>;
/// 3×3 matrix of f64.
pub type Mat3 = nalgebra::Matrix3<f64>;
/// 3×3 matrix of f32.
pub type Mat3f = nalgebra::Matrix3<f32>;
/// Point in 3-D space, f64.
pub type Point3 = nalgebra::Point3<f64>;

/// A ground plane `(normal, offset)` as the kernels' vec4 (unit normal in xyz, offset in w;
/// all zero for none).
pub fn plane_vec4(ground: Option<([f64; 3], f64)>) -> [f32; 4] {
    match ground {
        Some((n, o)) => {
            let l = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
                .sqrt()
                .max(f64::MIN_POSITIVE);
            [
                (n[0] / l) as f32,
                (n[1] / l) as f32,
                (n[2] / l) as f32,
                o as f32,
            ]
        }
        None => [0.0; 4],
    }
}

/// A 3-vector as the kernels' vec4 (w = 0).
pub fn vec4(v: [f64; 3]) -> [f32; 4] {
    [v[0] as f32, v[1] as f32, v[2] as f32, 0.0]
}

/// 3-vectors as the kernels' vec4 array (w = 0).
pub fn vec4s(v: &[[f64; 3]]) -> Vec<[f32; 4]> {
    v.iter().copied().map(vec4).collect()
}
