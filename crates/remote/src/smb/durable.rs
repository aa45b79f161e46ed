//! Durable handles: an open the server keeps for a while after its connection breaks,
//! so that the client can claim it back on a new session and go on with it.
//!
//! naslab asks for one on every file it opens for its ops (MS-SMB2 3.2.4.3.5): on SMB
//! 3.x with `SMB2_CREATE_DURABLE_HANDLE_REQUEST_V2` ("DH2Q", a CreateGuid of its own
//! per open), on 2.x with `SMB2_CREATE_DURABLE_HANDLE_REQUEST` ("DHnQ"). A server
//! grants one only to an open that also holds a batch oplock or a lease with handle
//! caching (MS-SMB2 3.3.5.9.10); naslab asks for a batch oplock with it, and answers
//! its breaks (the `smb2` crate acknowledges a break of a registered handle at once,
//! down to no oplock). After a reconnect each granted handle is claimed back with
//! `SMB2_CREATE_DURABLE_HANDLE_RECONNECT_V2` ("DH2C": the file id and the same
//! CreateGuid) or `SMB2_CREATE_DURABLE_HANDLE_RECONNECT` ("DHnC": the file id), the
//! context alone on the CREATE, as the server may refuse any other beside it.

use smb2::msg::create_context::{
    self, CreateContext, DurableGrant, DurableReconnectV2, DurableRequestV2,
};
use smb2::pack::Guid;
use smb2::types::{Dialect, FileId};

use naslab_backend::OpError;

/// `SMB2_CREATE_DURABLE_HANDLE_REQUEST` and its response (MS-SMB2 2.2.13.2.3,
/// 2.2.14.2.3).
pub(super) const NAME_DHNQ: &[u8] = b"DHnQ";
/// `SMB2_CREATE_DURABLE_HANDLE_RECONNECT` (MS-SMB2 2.2.13.2.4).
pub(super) const NAME_DHNC: &[u8] = b"DHnC";

/// Which durable handle a session's dialect has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// SMB 2.0.2 and 2.1: DHnQ and DHnC, the open named by its file id alone.
    V1,
    /// SMB 3.x: DH2Q and DH2C, the open named by its file id and CreateGuid.
    V2,
}

impl Kind {
    pub(super) fn of(dialect: Dialect) -> Kind {
        if dialect >= Dialect::Smb3_0 {
            Kind::V2
        } else {
            Kind::V1
        }
    }
}

/// A durable handle the server granted, and what claims it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Grant {
    pub(super) kind: Kind,
    /// The CreateGuid sent with the request (V2; zero for V1).
    pub(super) create_guid: Guid,
    /// How long the server keeps the open after a disconnect, ms (0: it did not say;
    /// V1 responses never say).
    pub(super) timeout_ms: u32,
}

/// The create contexts of a CREATE that asks for a durable handle: `create_guid` is
/// the V2 request's (unused for V1).
pub(super) fn request(kind: Kind, create_guid: Guid) -> Vec<u8> {
    let ctx = match kind {
        // Timeout 0: the server's own (Samba: 60 s); not persistent.
        Kind::V2 => DurableRequestV2 {
            timeout_ms: 0,
            persistent: false,
            create_guid,
        }
        .context(),
        // DurableRequest: 16 reserved bytes.
        Kind::V1 => CreateContext::new(NAME_DHNQ, vec![0; 16]),
    };
    create_context::pack_contexts(&[ctx])
}

/// What a CREATE response's contexts grant: `Some` when they hold the durable
/// handle response of the kind asked for.
pub(super) fn granted(
    kind: Kind,
    create_guid: Guid,
    contexts: &[u8],
) -> Result<Option<Grant>, OpError> {
    let bad = |e: smb2::Error| OpError {
        errno: crate::errno::EIO,
        detail: Some(format!(
            "SMB: a malformed create context in a CREATE response ({e})"
        )),
    };
    let all = create_context::parse_contexts(contexts).map_err(bad)?;
    let grant = match kind {
        Kind::V2 => match create_context::find(&all, create_context::NAME_DH2Q) {
            Some(c) => {
                let g = DurableGrant::from_bytes(&c.data).map_err(bad)?;
                Some(Grant {
                    kind,
                    create_guid,
                    timeout_ms: g.timeout_ms,
                })
            }
            None => None,
        },
        // DurableResponse: 8 reserved bytes.
        Kind::V1 => create_context::find(&all, NAME_DHNQ).map(|_| Grant {
            kind,
            create_guid: Guid::ZERO,
            timeout_ms: 0,
        }),
    };
    Ok(grant)
}

/// The create contexts of a CREATE that claims `grant`'s open (`file_id` on the lost
/// session) back.
pub(super) fn reconnect(grant: &Grant, file_id: FileId) -> Vec<u8> {
    let ctx = match grant.kind {
        Kind::V2 => DurableReconnectV2 {
            file_id,
            create_guid: grant.create_guid,
            persistent: false,
        }
        .context(),
        Kind::V1 => {
            let mut data = Vec::with_capacity(16);
            data.extend_from_slice(&file_id.persistent.to_le_bytes());
            data.extend_from_slice(&file_id.volatile.to_le_bytes());
            CreateContext::new(NAME_DHNC, data)
        }
    };
    create_context::pack_contexts(&[ctx])
}

/// A CreateGuid: 16 random bytes from the operating system. It must be unique per
/// open, and unguessable, since it is what lets a session claim the open.
pub(super) fn new_guid() -> Result<Guid, OpError> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| OpError {
        errno: crate::errno::EIO,
        detail: Some(format!(
            "SMB: no random bytes for a durable handle's CreateGuid ({e})"
        )),
    })?;
    Ok(Guid {
        data1: u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
        data2: u16::from_le_bytes([b[4], b[5]]),
        data3: u16::from_le_bytes([b[6], b[7]]),
        data4: [b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GUID: Guid = Guid {
        data1: 0x0403_0201,
        data2: 0x0605,
        data3: 0x0807,
        data4: [9, 10, 11, 12, 13, 14, 15, 16],
    };

    /// A create context's fixed part (MS-SMB2 2.2.13.2): Next, NameOffset (16),
    /// NameLength (4), Reserved, DataOffset (24: the name padded to 8), DataLength.
    fn head(data_len: u32) -> Vec<u8> {
        let mut v = vec![0, 0, 0, 0, 16, 0, 4, 0, 0, 0, 24, 0];
        v.extend_from_slice(&data_len.to_le_bytes());
        v
    }

    #[test]
    fn the_v2_request_is_dh2q_as_ms_smb2_lays_it_out() {
        let mut want = head(32);
        want.extend_from_slice(b"DH2Q\0\0\0\0");
        // Timeout 0 (the server's), Flags 0 (not persistent), 8 reserved bytes, the
        // CreateGuid (data1, data2, data3 little-endian, then data4).
        want.extend_from_slice(&[0; 16]);
        want.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
        assert_eq!(request(Kind::V2, GUID), want);
    }

    #[test]
    fn the_v1_request_is_dhnq_with_16_reserved_bytes() {
        let mut want = head(16);
        want.extend_from_slice(b"DHnQ\0\0\0\0");
        want.extend_from_slice(&[0; 16]);
        assert_eq!(request(Kind::V1, GUID), want);
    }

    #[test]
    fn a_granted_handle_is_read_from_the_response_and_its_absence_is_none() {
        // DH2Q response (2.2.14.2.12): Timeout 60000 ms, Flags 0, after another
        // context (MxAc, 8 bytes of data) that comes first in the chain.
        let mut mxac = vec![32, 0, 0, 0, 16, 0, 4, 0, 0, 0, 24, 0, 8, 0, 0, 0];
        mxac.extend_from_slice(b"MxAc\0\0\0\0");
        mxac.extend_from_slice(&[0; 8]);
        let mut dh2q = head(8);
        dh2q.extend_from_slice(b"DH2Q\0\0\0\0");
        dh2q.extend_from_slice(&60_000u32.to_le_bytes());
        dh2q.extend_from_slice(&[0; 4]);
        let chain = [mxac.clone(), dh2q].concat();
        assert_eq!(
            granted(Kind::V2, GUID, &chain).unwrap(),
            Some(Grant {
                kind: Kind::V2,
                create_guid: GUID,
                timeout_ms: 60_000
            })
        );
        // MxAc alone: nothing granted.
        mxac[0..4].copy_from_slice(&[0; 4]);
        assert_eq!(granted(Kind::V2, GUID, &mxac).unwrap(), None);
        assert_eq!(granted(Kind::V2, GUID, &[]).unwrap(), None);
        // A DHnQ response (2.2.14.2.3: 8 reserved bytes) to a V1 request.
        let mut dhnq = head(8);
        dhnq.extend_from_slice(b"DHnQ\0\0\0\0");
        dhnq.extend_from_slice(&[0; 8]);
        assert_eq!(
            granted(Kind::V1, GUID, &dhnq).unwrap().map(|g| g.kind),
            Some(Kind::V1)
        );
        // A DH2Q response with its data cut short, and a chain pointing outside
        // itself, are errors, not grants.
        let mut short = head(4);
        short.extend_from_slice(b"DH2Q\0\0\0\0");
        short.extend_from_slice(&[0; 4]);
        assert!(granted(Kind::V2, GUID, &short).is_err());
        let mut past = head(8);
        past[0] = 200;
        past.extend_from_slice(b"DH2Q\0\0\0\0");
        past.extend_from_slice(&[0; 8]);
        assert!(granted(Kind::V2, GUID, &past).is_err());
    }

    #[test]
    fn the_reconnects_carry_the_file_id_and_the_create_guid() {
        let file_id = FileId {
            persistent: 0x1112_1314_1516_1718,
            volatile: 0x2122_2324_2526_2728,
        };
        let grant = Grant {
            kind: Kind::V2,
            create_guid: GUID,
            timeout_ms: 60_000,
        };
        // DH2C (2.2.13.2.12): FileId (persistent, volatile), CreateGuid, Flags; 36
        // bytes, the entry padded to 8.
        let mut want = head(36);
        want.extend_from_slice(b"DH2C\0\0\0\0");
        want.extend_from_slice(&[0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11]);
        want.extend_from_slice(&[0x28, 0x27, 0x26, 0x25, 0x24, 0x23, 0x22, 0x21]);
        want.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
        want.extend_from_slice(&[0; 4]);
        want.extend_from_slice(&[0; 4]);
        assert_eq!(reconnect(&grant, file_id), want);
        // DHnC (2.2.13.2.4): the FileId alone.
        let v1 = Grant {
            kind: Kind::V1,
            ..grant
        };
        let mut want = head(16);
        want.extend_from_slice(b"DHnC\0\0\0\0");
        want.extend_from_slice(&[0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11]);
        want.extend_from_slice(&[0x28, 0x27, 0x26, 0x25, 0x24, 0x23, 0x22, 0x21]);
        assert_eq!(reconnect(&v1, file_id), want);
    }

    #[test]
    fn create_guids_differ() {
        let a = new_guid().unwrap();
        let b = new_guid().unwrap();
        assert_ne!(a, b);
    }
}
