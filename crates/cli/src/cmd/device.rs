//! The device under test as given on the command line (--device, --firmware, --notes,
//! --tag), checked.

use anyhow::bail;
use naslab_results::Device;

use crate::args::DeviceArgs;

/// The device description from the flags; a malformed or repeated tag is an error.
pub fn device(args: &DeviceArgs) -> anyhow::Result<Device> {
    let text = |flag: &str, v: &Option<String>| -> anyhow::Result<Option<String>> {
        match v.as_deref().map(str::trim) {
            None => Ok(None),
            Some("") => bail!("--{flag} is empty; give a value or leave the flag out"),
            Some(t) => Ok(Some(t.to_string())),
        }
    };
    let mut d = Device {
        name: text("device", &args.device)?,
        firmware: text("firmware", &args.firmware)?,
        notes: text("notes", &args.notes)?,
        ..Device::default()
    };
    for tag in &args.tags {
        let Some((k, v)) = tag.split_once('=') else {
            bail!("--tag '{tag}' must be KEY=VALUE, e.g. --tag disks=4");
        };
        let k = k.trim();
        if k.is_empty() {
            bail!("--tag '{tag}' has no key; write KEY=VALUE, e.g. --tag disks=4");
        }
        if d.tags.insert(k.to_string(), v.trim().to_string()).is_some() {
            bail!("--tag {k} is given twice; give each key once");
        }
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(tags: &[&str]) -> DeviceArgs {
        DeviceArgs {
            device: Some(" Acme Box 4 ".into()),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            ..DeviceArgs::default()
        }
    }

    #[test]
    fn tags_split_at_the_first_equals_sign() {
        let d = device(&args(&["raid=5", "opts=a=b"])).unwrap();
        assert_eq!(d.name.as_deref(), Some("Acme Box 4"));
        assert_eq!(d.tags["raid"], "5");
        assert_eq!(d.tags["opts"], "a=b");
        assert_eq!(d.firmware, None);
    }

    #[test]
    fn bad_tags_are_refused_with_the_fix() {
        for (tags, says) in [
            (&["raid"][..], "KEY=VALUE"),
            (&["=5"][..], "no key"),
            (&["raid=5", "raid=6"][..], "twice"),
        ] {
            let e = device(&args(tags)).unwrap_err().to_string();
            assert!(e.contains(says), "{tags:?}: {e}");
        }
        let empty = DeviceArgs {
            device: Some("  ".into()),
            ..DeviceArgs::default()
        };
        assert!(
            device(&empty)
                .unwrap_err()
                .to_string()
                .contains("--device is empty")
        );
    }
}
