    in_spec_ = R"([1, {"type": "builtins.tuple", "context": "null", "children_spec": [{"type": "builtins.tuple", "context": "null", "children_spec": [{"type": "builtins.dict", "context": "[\"observation\", \"goal\"]", "children_spec": [{"type": null, "context": null, "children_spec": []}, {"type": "builtins.dict", "context": "[\"bias\"]", "children_spec": [{"type": null, "context": null, "children_spec": []}]}]}]}, {"type": "builtins.dict", "context": "[]", "children_spec": []}]}])";
    out_spec_ = R"([1, {"type": "builtins.dict", "context": "[\"action\"]", "children_spec": [{"type": null, "context": null, "children_spec": []}]}])";
AOTI_NOINLINE static void check_input_0(AtenTensorHandle* input_handles) {
    int32_t arg6_1_expected_dtype = aoti_torch_dtype_float32();
    if (arg6_1_size[0] < 2) {
    }
    if (arg6_1_size[0] > 1024) {
    }
    if (5 != arg6_1_size[1]) {
    }
}
AOTI_NOINLINE static void check_input_1(AtenTensorHandle* input_handles) {
    int32_t arg7_1_expected_dtype = aoti_torch_dtype_float32();
    if (3 != arg7_1_size[1]) {
    }
}
static bool _check_aoti_runtime_check_inputs_env() {
}
