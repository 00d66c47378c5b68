#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| revendor_fuzz::patch_parse(data));
