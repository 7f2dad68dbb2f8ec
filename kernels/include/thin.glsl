// Thin elements for cloth and rods, shared by fem/thin_gradient.comp and fem/assemble_hessian.comp.
// Element e: verts[e] (0xFFFFFFFF = unused corner), kind[e], data[2e], data[2e + 1]:
//   KIND 0 membrane (StVK, plane stress): data0 = Dm⁻¹ row-major (00, 01, 10, 11),
//          data1 = (area, μ·thickness, λ·thickness, 0);
//   KIND 1 quadratic ½‖Σ wᵢ xᵢ‖² (cloth hinge, rod bend): data0 = w;
//   KIND 2 spring ½ k (‖x₁ − x₀‖ − L)²: data0 = (L, k, 0, 0).
// Reference: engine/src/cpu_reference/thin.rs.
const uint THIN_NONE = 0xFFFFFFFFu;
const uint THIN_MEMBRANE = 0u;
const uint THIN_QUADRATIC = 1u;
const uint THIN_SPRING = 2u;

// Row a of the membrane's gradient operator: b₀ = −(r₀ + r₁), b₁ = r₀, b₂ = r₁ (rᵢ rows of Dm⁻¹).
vec2 membrane_b(vec4 dmi, uint a) {
    vec2 r0 = dmi.xy, r1 = dmi.zw;
    return a == 0u ? -(r0 + r1) : (a == 1u ? r0 : r1);
}

// F = Ds Dm⁻¹ (3×2, GLSL mat2x3 = 2 columns of vec3).
mat2x3 membrane_f(vec3 x0, vec3 x1, vec3 x2, vec4 dmi) {
    mat2x3 ds = mat2x3(x1 - x0, x2 - x0);
    mat2 m = mat2(vec2(dmi.x, dmi.z), vec2(dmi.y, dmi.w)); // columns of Dm⁻¹
    return ds * m;
}

// Second Piola–Kirchhoff stress S = 2μG + λ tr(G) I, G = (FᵀF − I)/2.
mat2 membrane_s(mat2x3 f, float mu, float lambda) {
    mat2 g = 0.5 * (transpose(f) * f - mat2(1.0));
    return 2.0 * mu * g + lambda * (g[0][0] + g[1][1]) * mat2(1.0);
}
