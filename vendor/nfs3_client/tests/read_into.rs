// READ with the data copied straight into the caller's buffer gives what READ gives, over
// calls whose replies grow and shrink (the client keeps and reuses its buffers).

use nfs3_client::io::{AsyncRead, AsyncWrite};
use nfs3_client::nfs3_types::nfs3::{
    Nfs3Option, Nfs3Result, READ3args, READ3resfail, READ3resok, nfs_fh3, nfsstat3,
};
use nfs3_client::nfs3_types::rpc::{
    accept_stat_data, accepted_reply, fragment_header, msg_body, opaque_auth, reply_body, rpc_msg,
};
use nfs3_client::nfs3_types::xdr_codec::{Opaque, Pack};
use nfs3_client::Nfs3Client;

/// A server that answers each call with the next scripted READ result, echoing the xid.
struct Scripted {
    replies: Vec<Nfs3Result<READ3resok<'static>, READ3resfail>>,
    out: Vec<u8>,
    pending: Vec<u8>,
}

impl AsyncWrite for Scripted {
    async fn async_write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // A call: fragment header, then the xid.
        let xid = u32::from_be_bytes(buf[4..8].try_into().unwrap());
        let result = self.replies.remove(0);
        let msg = rpc_msg {
            xid,
            body: msg_body::REPLY(reply_body::MSG_ACCEPTED(accepted_reply {
                verf: opaque_auth::default(),
                reply_data: accept_stat_data::SUCCESS,
            })),
        };
        let mut body = Vec::new();
        msg.pack(&mut body).unwrap();
        result.pack(&mut body).unwrap();
        self.out.clear();
        fragment_header::new(body.len() as u32, true)
            .pack(&mut self.out)
            .unwrap();
        self.out.extend_from_slice(&body);
        self.pending = std::mem::take(&mut self.out);
        Ok(buf.len())
    }
}

impl AsyncRead for Scripted {
    async fn async_read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.pending.len());
        buf[..n].copy_from_slice(&self.pending[..n]);
        self.pending.drain(..n);
        Ok(n)
    }
}

fn ok(data: &[u8], eof: bool) -> Nfs3Result<READ3resok<'static>, READ3resfail> {
    Nfs3Result::Ok(READ3resok {
        file_attributes: Nfs3Option::None,
        count: data.len() as u32,
        eof,
        data: Opaque::owned(data.to_vec()),
    })
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

#[test]
fn read_into_copies_what_read_returns_and_reuses_its_buffers() {
    let big: Vec<u8> = (0..70_001u32).map(|i| (i * 7) as u8).collect();
    let replies = vec![
        ok(&big, false),
        ok(b"0123456789", true),
        ok(b"abcdefghij", false),
        Nfs3Result::Err((
            nfsstat3::NFS3ERR_IO,
            READ3resfail {
                file_attributes: Nfs3Option::None,
            },
        )),
        ok(b"xyz", true),
    ];
    let mut client = Nfs3Client::new(Scripted {
        replies,
        out: Vec::new(),
        pending: Vec::new(),
    });
    let args = READ3args {
        file: nfs_fh3::default(),
        offset: 0,
        count: 0,
    };
    // A reply longer than any before it (odd length: the padding is skipped).
    let mut out = vec![0u8; 80_000];
    let r = block_on(client.read_into(&args, &mut out)).unwrap().unwrap();
    assert_eq!((r.len, r.copied, r.count, r.eof), (70_001, 70_001, 70_001, false));
    assert_eq!(&out[..70_001], &big[..]);
    // A shorter reply in the same buffers, into a buffer that holds it all.
    let mut out = [0u8; 16];
    let r = block_on(client.read_into(&args, &mut out)).unwrap().unwrap();
    assert_eq!((r.len, r.copied, r.eof), (10, 10, true));
    assert_eq!(&out[..10], b"0123456789");
    // A buffer shorter than the data: as much as fits.
    let mut out = [0u8; 4];
    let r = block_on(client.read_into(&args, &mut out)).unwrap().unwrap();
    assert_eq!((r.len, r.copied), (10, 4));
    assert_eq!(&out, b"abcd");
    // A failure status comes back as the server said it.
    match block_on(client.read_into(&args, &mut out)).unwrap() {
        Nfs3Result::Err((status, _)) => assert_eq!(status, nfsstat3::NFS3ERR_IO),
        Nfs3Result::Ok(r) => panic!("read {r:?} where the server failed"),
    }
    // And the plain READ still reads the same records after all that.
    let r = block_on(client.read(&args)).unwrap().unwrap();
    assert_eq!(r.data.as_ref(), b"xyz");
}
