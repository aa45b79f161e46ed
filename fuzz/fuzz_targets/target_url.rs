//! A `--target` URL (smb:// or nfs://): parsed or refused, never a panic, and a parsed
//! one never names a path that leaves its share.

#![no_main]

use libfuzzer_sys::fuzz_target;
use naslab_remote::url::RemoteUrl;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(url) = text.parse::<RemoteUrl>() else {
        return;
    };
    assert!(!url.host.is_empty());
    assert!(url.port != Some(0) && url.mount_port != Some(0));
    if !url.path.is_empty() {
        for part in url.path.split('/') {
            assert!(
                !part.is_empty() && part != "." && part != ".." && !part.contains('\\'),
                "{text:?} gives path {:?}",
                url.path
            );
        }
    }
    let _ = url.to_string();
});
