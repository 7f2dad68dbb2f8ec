// 3x3 blocks stored as three vec4 rows (w unused): block b occupies vec4s [3b, 3b + 3).
vec3 block_mul(vec4 r0, vec4 r1, vec4 r2, vec3 x) {
    return vec3(dot(r0.xyz, x), dot(r1.xyz, x), dot(r2.xyz, x));
}

vec3 block_mul_transposed(vec4 r0, vec4 r1, vec4 r2, vec3 x) {
    return r0.xyz * x.x + r1.xyz * x.y + r2.xyz * x.z;
}
