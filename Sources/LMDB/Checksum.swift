internal import CISAL
internal import CLMDB

/// CRC-32C (Castagnoli), the one implementation of the project.
///
/// It checksums checksummed entries, every commit record and an upcast's fingerprint, by
/// ISA-L (`crc32_iscsi`: the processor's CRC instructions where it has them, chosen at run
/// time).
public enum CRC32C {
  /// The checksum of `bytes`.
  public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 { ~extend(0xFFFF_FFFF, bytes) }

  /// The checksum of `bytes`.
  public static func checksum(_ bytes: [UInt8]) -> UInt32 {
    // SAFETY: `withUnsafeBytes` lends the array's storage for the call only.
    bytes.withUnsafeBytes { checksum($0) }
  }

  /// The running (not yet inverted) CRC `crc` carried over `bytes`.
  static func extend(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
    guard let base = bytes.baseAddress else { return crc }
    // SAFETY: reads `bytes.count` bytes from `base`, all inside `bytes`, as bytes, and writes
    // none (`eventgraph_crc32c_long` cuts the length into pieces `crc32_iscsi`'s `int` holds).
    return eventgraph_crc32c_long(crc, base, bytes.count)
  }
}

/// The CRC-32C that values of a ``DatabaseFlags/checksummed`` database carry.
///
/// Every value is stored with four bytes after it: the CRC-32C (little-endian) of the key
/// followed by the value, so a changed byte of either, or a value moved under another key,
/// is found when the entry is read. LMDB's pages carry no checksum of their own.
enum EntryChecksum {
  static let size = 4

  /// The checksum of `key` followed by `value`.
  static func of(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> UInt32 {
    // SAFETY: reads `count` bytes from the start of each buffer, as bytes, and writes none;
    // a buffer without a base address is passed as empty.
    eventgraph_crc32c_pair(
      key.baseAddress, key.baseAddress == nil ? 0 : key.count, value.baseAddress,
      value.baseAddress == nil ? 0 : value.count)
  }

  /// Inputs up to this length are checksummed by the processor's instruction inline (the
  /// limit `eventgraph_crc32c_pair` in CISAL's shim applies); longer ones by ISA-L.
  static let shortLength = Int(EVENTGRAPH_CRC32C_SHORT)

  /// The checksum of `key` and `value` computed by ISA-L alone (the reference the inline
  /// path is tested against).
  static func ofByLibrary(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> UInt32 {
    ~CRC32C.extend(CRC32C.extend(0xFFFF_FFFF, key), value)
  }

  /// Calls `body` with `value` followed by its checksum (for `key`), as it is stored.
  static func withStored<R>(
    _ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> R
  ) -> R {
    // SAFETY: the temporary buffer lives for the call and holds the value and its checksum;
    // `body` gets it only for the call (LMDB copies it into its pages).
    withUnsafeTemporaryAllocation(byteCount: value.count + size, alignment: 1) { buffer in
      if value.count > 0, let base = value.baseAddress {
        buffer.baseAddress?.copyMemory(from: base, byteCount: value.count)
      }
      write(of(key, value), into: buffer, at: value.count)
      return body(UnsafeRawBufferPointer(buffer))
    }
  }

  /// Writes `value` and then `crc` into `region`, which LMDB reserved for exactly them.
  static func fill(_ region: UnsafeMutableRawPointer, _ value: UnsafeRawBufferPointer, _ crc: UInt32) {
    // SAFETY: `region` holds `value.count + size` writable bytes (the reservation's size),
    // inside a dirty page of the caller's transaction, and `value` does not overlap it: only
    // values that are their own memory (`LMDBBytes.isOwnMemory`), never the map's, come here.
    let buffer = UnsafeMutableRawBufferPointer(start: region, count: value.count + size)
    if let base = value.baseAddress, value.count > 0 { region.copyMemory(from: base, byteCount: value.count) }
    write(crc, into: buffer, at: value.count)
  }

  /// Bytes as lowercase hexadecimal (the first 64 of them), to name a key in a message.
  static func hex(_ bytes: some Collection<UInt8>) -> String {
    bytes.prefix(64).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
  }

  /// Writes the checksum into the four bytes at `at`.
  static func write(_ crc: UInt32, into buffer: UnsafeMutableRawBufferPointer, at: Int) {
    for i in 0..<size { buffer[at + i] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(i))) }
  }

  /// The value without its checksum, or `nil` when the checksum does not match.
  static func verified(_ key: UnsafeRawBufferPointer, _ stored: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
    guard stored.count >= size else { return nil }
    let value = UnsafeRawBufferPointer(rebasing: stored[..<(stored.count - size)])
    var crc: UInt32 = 0
    for i in 0..<size { crc |= UInt32(stored[value.count + i]) << (8 * UInt32(i)) }
    return crc == of(key, value) ? value : nil
  }

  /// The error of an entry that fails its checksum.
  static func mismatch(_ txn: OpaquePointer, _ db: Database, _ key: UnsafeRawBufferPointer) -> LMDBError {
    var path: UnsafePointer<CChar>?
    _ = mdb_env_get_path(mdb_txn_env(txn), &path)
    // SAFETY: LMDB returns its own copy of the path, valid while the environment is open.
    let file = path.map { String(cString: $0) + "/data.mdb" } ?? "the data file"
    let hex = hex(key)
    return LMDBError(
      damage: FileDamage(
        file: file, page: nil, database: db.name,
        detail: "the entry with key \(hex) does not match its checksum; the database must be rebuilt from its source"))
  }
}
