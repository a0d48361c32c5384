internal import CSodium

/// Authenticated encryption with XChaCha20-Poly1305 (IETF), from libsodium.
///
/// The output of ``seal(_:key:additionalData:)`` is the 24-byte random nonce, the
/// ciphertext (as long as the plaintext) and the 16-byte tag: ``overhead`` bytes more than
/// the plaintext. The nonce is random for each seal, which XChaCha20's 24-byte nonce makes
/// safe for any number of seals under one key. The additional data is authenticated but not
/// stored: open must be given the same bytes, which binds a sealed value to its place (its
/// subject, entity and property) so that it cannot be moved to another.
public enum Seal {
  static let nonceBytes = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
  static let tagBytes = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)

  /// Bytes a seal adds to its plaintext: the nonce (24) and the tag (16).
  public static let overhead = 40

  /// The length of a data key wrapped by ``wrap(_:with:additionalData:)``.
  public static let wrappedKeyByteCount = SymmetricKey.byteCount + overhead

  /// Encrypts and authenticates `plaintext` under `key`, binding it to `additionalData`.
  ///
  /// - Returns: nonce ‖ ciphertext ‖ tag, `plaintext.count + overhead` bytes.
  public static func seal(
    _ plaintext: some Collection<UInt8>, key: SymmetricKey, additionalData: some Collection<UInt8>
  ) -> [UInt8] {
    Sodium.readyOrTrap()
    return withContiguousBytes(of: plaintext) { message in
      withContiguousBytes(of: additionalData) { ad in
        key.withBytes { k in sealContiguous(message, key: k, additionalData: ad) }
      }
    }
  }

  /// The seal of contiguous bytes: the one call of the encryption.
  private static func sealContiguous(
    _ message: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, additionalData ad: UnsafeRawBufferPointer
  ) -> [UInt8] {
    let total = message.count + overhead
    return [UInt8](unsafeUninitializedCapacity: total) { output, count in
      // SAFETY: `output` has room for `total` bytes: the nonce at its start, then the
      // ciphertext and tag (`message.count + tagBytes`), which is exactly what libsodium
      // writes there; every input pointer is valid for its stated length through the call.
      guard let out = output.baseAddress, let k = key.baseAddress else { preconditionFailure("empty buffer") }
      randombytes_buf(out, nonceBytes)
      var written: UInt64 = 0
      let rc = crypto_aead_xchacha20poly1305_ietf_encrypt(
        out + nonceBytes, &written,
        message.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(message.count),
        ad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(ad.count),
        nil, out, k.assumingMemoryBound(to: UInt8.self))
      // Encryption fails only for a message longer than libsodium's limit (about 2^64 bytes).
      precondition(
        rc == 0 && Int(written) == message.count + tagBytes, "crypto_aead_xchacha20poly1305_ietf_encrypt failed")
      count = total
    }
  }

  /// Checks and decrypts bytes made by ``seal(_:key:additionalData:)``.
  ///
  /// - Throws: ``CryptoError/Code/malformed`` if `sealed` is shorter than ``overhead``;
  ///   ``CryptoError/Code/authenticationFailed`` if the key or the additional data is not
  ///   the one it was sealed with, or any byte was changed.
  public static func open(
    _ sealed: some Collection<UInt8>, key: SymmetricKey, additionalData: some Collection<UInt8>
  ) throws(CryptoError) -> [UInt8] {
    try Sodium.ready()
    guard sealed.count >= overhead else {
      throw CryptoError(
        code: .malformed, path: nil,
        message: "Sealed bytes are \(sealed.count) bytes long, shorter than the \(overhead) every seal has.")
    }
    let plaintext: [UInt8]? = withContiguousBytes(of: sealed) { input in
      withContiguousBytes(of: additionalData) { ad in
        key.withBytes { k in
          openContiguous(input, key: k, additionalData: ad) { plain in Array(plain) }
        }
      }
    }
    guard let plaintext else { throw authenticationFailed(key) }
    return plaintext
  }

  /// Opens contiguous sealed bytes into a scratch buffer that `use` reads and that is
  /// zeroed afterwards; nil when the seal does not open.
  private static func openContiguous<R>(
    _ input: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, additionalData ad: UnsafeRawBufferPointer,
    _ use: (UnsafeRawBufferPointer) -> R
  ) -> R? {
    let plainCount = input.count - overhead
    let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: max(plainCount, 1), alignment: 16)
    defer {
      sodium_memzero(scratch.baseAddress, scratch.count)
      scratch.deallocate()
    }
    // SAFETY: `input` is at least `overhead` bytes (checked by the callers): its nonce is
    // the first `nonceBytes`, the rest is ciphertext and tag; `scratch` has room for the
    // `plainCount` bytes libsodium writes; every pointer is valid through the call.
    guard let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self),
      let k = key.baseAddress?.assumingMemoryBound(to: UInt8.self)
    else { return nil }
    var written: UInt64 = 0
    let rc = crypto_aead_xchacha20poly1305_ietf_decrypt(
      scratch.baseAddress?.assumingMemoryBound(to: UInt8.self), &written, nil,
      base + nonceBytes, UInt64(input.count - nonceBytes),
      ad.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(ad.count),
      base, k)
    guard rc == 0 else { return nil }
    return use(UnsafeRawBufferPointer(rebasing: scratch[0..<Int(written)]))
  }

  private static func authenticationFailed(_ key: SymmetricKey) -> CryptoError {
    CryptoError(
      code: .authenticationFailed, path: nil,
      message:
        "Sealed bytes did not open under key \(key.fingerprint): the key or the additional data is not the one they were sealed with, or the bytes are damaged."
    )
  }

  // MARK: - Wrapped keys

  /// Wraps a data key under a key-encryption key: the seal of its 32 bytes, 72 bytes long.
  ///
  /// - Parameters:
  ///   - key: the data key (a subject's key).
  ///   - kek: the key-encryption key (``KeyFile``'s).
  ///   - additionalData: what the wrapped key belongs to (the subject), so that a wrapped
  ///     key copied to another subject's slot does not unwrap there.
  public static func wrap(
    _ key: SymmetricKey, with kek: SymmetricKey, additionalData: some Collection<UInt8>
  ) -> [UInt8] {
    Sodium.readyOrTrap()
    return withContiguousBytes(of: additionalData) { ad in
      kek.withBytes { k in key.withBytes { plain in sealContiguous(plain, key: k, additionalData: ad) } }
    }
  }

  /// Unwraps a data key wrapped by ``wrap(_:with:additionalData:)``.
  ///
  /// - Throws: ``CryptoError/Code/malformed`` unless `wrapped` is 72 bytes;
  ///   ``CryptoError/Code/authenticationFailed`` for another key-encryption key, other
  ///   additional data or damaged bytes.
  public static func unwrap(
    _ wrapped: some Collection<UInt8>, with kek: SymmetricKey, additionalData: some Collection<UInt8>
  ) throws(CryptoError) -> SymmetricKey {
    try Sodium.ready()
    guard wrapped.count == wrappedKeyByteCount else {
      throw CryptoError(
        code: .malformed, path: nil,
        message: "A wrapped key is \(wrappedKeyByteCount) bytes long; these bytes are \(wrapped.count).")
    }
    let key: SymmetricKey? = withContiguousBytes(of: wrapped) { input in
      withContiguousBytes(of: additionalData) { ad in
        kek.withBytes { k in
          openContiguous(input, key: k, additionalData: ad) { plain in
            // The plaintext goes from the zeroed scratch buffer straight into the key's memory.
            SymmetricKey { (storage: UnsafeMutableRawPointer) in
              // SAFETY: a seal that opens to other than 32 bytes was never a wrapped key
              // (the 72-byte length was checked), so `plain` fits the key's 32 bytes.
              UnsafeMutableRawBufferPointer(start: storage, count: SymmetricKey.byteCount).copyMemory(from: plain)
            }
          }
        }
      }
    }
    guard let key else { throw authenticationFailed(kek) }
    return key
  }
}
