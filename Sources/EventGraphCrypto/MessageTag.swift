internal import CSodium

/// Tags that prove a message was made by a holder of a key: HMAC-SHA-512-256 (libsodium's
/// `crypto_auth`), 32 bytes, under a 32-byte ``SymmetricKey``.
///
/// Whoever lacks the key cannot make a tag that ``verify(_:of:key:)`` accepts, so a
/// message with a good tag comes from a holder of the key and is as it was tagged.
///
/// ```swift
/// let tag = MessageTag.tag(bytes, key: writersKey)
/// guard MessageTag.verify(tag, of: bytes, key: writersKey) else { … }
/// ```
public enum MessageTag {
  /// The length of a tag, in bytes.
  public static let byteCount = Int(crypto_auth_BYTES)

  /// The tag of `bytes` under `key`.
  public static func tag(_ bytes: some Collection<UInt8>, key: SymmetricKey) -> [UInt8] {
    Sodium.readyOrTrap()
    return withContiguousBytes(of: bytes) { input in
      key.withBytes { k in
        [UInt8](unsafeUninitializedCapacity: byteCount) { output, count in
          // SAFETY: `output` has room for `byteCount` bytes, what crypto_auth writes; the
          // input is valid for its length and the key for crypto_auth_KEYBYTES (32) bytes,
          // the length of every SymmetricKey, through the call.
          guard let out = output.baseAddress, let keyBytes = k.baseAddress else {
            preconditionFailure("empty output or key buffer")
          }
          _ = crypto_auth(
            out, input.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(input.count),
            keyBytes.assumingMemoryBound(to: UInt8.self))
          count = byteCount
        }
      }
    }
  }

  /// Whether `tag` is the tag of `bytes` under `key`, compared in constant time.
  public static func verify(_ tag: some Collection<UInt8>, of bytes: some Collection<UInt8>, key: SymmetricKey) -> Bool
  {
    Sodium.readyOrTrap()
    guard tag.count == byteCount else { return false }
    let expected = Array(tag)
    return withContiguousBytes(of: bytes) { input in
      key.withBytes { k in
        expected.withUnsafeBufferPointer { t in
          // SAFETY: `t` holds exactly `byteCount` bytes (checked above), the input is valid
          // for its length and the key for its 32 bytes, through the call.
          guard let tagBytes = t.baseAddress, let keyBytes = k.baseAddress else { return false }
          return crypto_auth_verify(
            tagBytes, input.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(input.count),
            keyBytes.assumingMemoryBound(to: UInt8.self)) == 0
        }
      }
    }
  }
}
