internal import CSodium

/// A 32-byte symmetric key held in memory of its own, zeroed (`sodium_memzero`) when the
/// key is released.
///
/// The bytes never leave that memory except through ``withBytes(_:)`` and
/// ``bytesForTesting``: the module's own reading, random generation and unwrapping write
/// straight into it, so no stray copy of a key is left in freed memory.
///
/// ```swift
/// let kek = try KeyFile.load(from: "/etc/eventgraph/store.key")
/// let subjectKey = SymmetricKey.random()
/// let wrapped = Seal.wrap(subjectKey, with: kek, additionalData: subjectID)
/// ```
public final class SymmetricKey: Sendable {
  /// The length of every key, in bytes.
  public static let byteCount = 32

  // SAFETY (nonisolated(unsafe)): the 32 bytes are written only while the key is being
  // made (in `init`, before the key is shared), then only read, until `deinit` zeroes them
  // when no one holds the key any longer.
  private nonisolated(unsafe) let storage: UnsafeMutableRawPointer

  /// A key made by `fill`, which writes all ``byteCount`` bytes at the pointer it is given.
  ///
  /// If `fill` throws, whatever it wrote is zeroed and freed.
  init<E: Error>(filling fill: (UnsafeMutableRawPointer) throws(E) -> Void) throws(E) {
    let storage = UnsafeMutableRawPointer.allocate(byteCount: Self.byteCount, alignment: 16)
    storage.initializeMemory(as: UInt8.self, repeating: 0, count: Self.byteCount)
    do {
      try fill(storage)
    } catch {
      sodium_memzero(storage, Self.byteCount)
      storage.deallocate()
      throw error
    }
    self.storage = storage
  }

  deinit {
    sodium_memzero(storage, Self.byteCount)
    storage.deallocate()
  }

  /// A new key of random bytes from the system's secure generator (`randombytes_buf`).
  public static func random() -> SymmetricKey {
    Sodium.readyOrTrap()
    return SymmetricKey { (storage: UnsafeMutableRawPointer) in randombytes_buf(storage, byteCount) }
  }

  /// A key of the given bytes, which are copied.
  ///
  /// - Throws: ``CryptoError/Code/malformed`` unless there are exactly ``byteCount`` bytes.
  public convenience init(bytes: some Collection<UInt8>) throws(CryptoError) {
    try Sodium.ready()
    guard bytes.count == Self.byteCount else {
      throw CryptoError(
        code: .malformed, path: nil,
        message: "A key must be \(Self.byteCount) bytes long; \(bytes.count) were given.")
    }
    self.init { (storage: UnsafeMutableRawPointer) in
      // SAFETY: `storage` is the key's own `byteCount` bytes and `bytes` has exactly that
      // many elements (checked above), so the copy stays inside it.
      let buffer = UnsafeMutableRawBufferPointer(start: storage, count: Self.byteCount)
      _ = buffer.initializeMemory(as: UInt8.self, from: bytes)
    }
  }

  /// Runs `body` with the key's ``byteCount`` bytes.
  ///
  /// The buffer is valid only during the call, and must not be copied anywhere that
  /// outlives it unless that copy is zeroed too.
  public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try body(UnsafeRawBufferPointer(start: storage, count: Self.byteCount))
  }

  /// 16 hex digits that identify the key without revealing it, for error messages and logs.
  ///
  /// The first 8 bytes of BLAKE2b keyed with the key over a fixed context string: the same
  /// key always gives the same fingerprint, and the fingerprint tells nothing of the key.
  public var fingerprint: String {
    let digest = BlindHash.hash(Array("EventGraph key fingerprint".utf8), key: self, length: 16)
    let digits = Array("0123456789abcdef")
    return String(digest.prefix(8).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] })
  }

  /// A copy of the key's bytes, for tests that search files for the key.
  ///
  /// The copy is an ordinary array that nothing zeroes: never use it outside tests.
  public var bytesForTesting: [UInt8] { withBytes { Array($0) } }
}
