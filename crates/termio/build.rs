fn main() {
    // The link arguments a Node addon needs (none on Linux, but the same
    // build serves every platform napi-rs knows).
    napi_build::setup();
}
