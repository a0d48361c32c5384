internal import CLMDB

/// Something whose bytes can be handed to LMDB as a key or a value without copying.
public protocol LMDBBytes {
  /// Calls `body` with the bytes; the pointer is valid only inside `body`.
  func withLMDBBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R

  /// Whether the bytes are the value's own memory, never a page of an LMDB map.
  ///
  /// A put into a checksummed database writes such a value straight into the space LMDB
  /// reserves for it; any other value is first copied aside, since the put may move the
  /// page it was read from before it would be copied. `false` unless a type says otherwise.
  var isOwnMemory: Bool { get }
}

extension LMDBBytes {
  public var isOwnMemory: Bool { false }
}

extension Array: LMDBBytes where Element == UInt8 {
  /// Always: the storage is the value's own.
  public var isOwnMemory: Bool { true }

  public func withLMDBBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try withUnsafeBytes(body)
  }
}

extension ArraySlice: LMDBBytes where Element == UInt8 {
  /// Always: the storage is the value's own.
  public var isOwnMemory: Bool { true }

  public func withLMDBBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    try withUnsafeBytes(body)
  }
}

extension String: LMDBBytes {
  /// Always: the storage is the value's own.
  public var isOwnMemory: Bool { true }

  public func withLMDBBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    var copy = self
    // SAFETY: withUTF8 gives contiguous UTF-8 storage for the duration of the closure.
    return try copy.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
  }
}

/// A 64-bit unsigned integer as an 8-byte big-endian key, so keys sort numerically.
public struct BigEndianKey: LMDBBytes, Sendable, Hashable {
  public var value: UInt64
  public init(_ value: UInt64) { self.value = value }
  /// Always: the bytes are a local copy of the integer.
  public var isOwnMemory: Bool { true }

  public func withLMDBBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    var be = value.bigEndian
    // SAFETY: `be` is a local that outlives the closure call.
    return try withUnsafeBytes(of: &be) { try body($0) }
  }

  /// Reads an 8-byte big-endian integer from a copied value; `nil` unless it has exactly 8 bytes.
  public static func decode(_ bytes: [UInt8]) -> UInt64? {
    // SAFETY: `withUnsafeBytes` lends the array's storage for the call only.
    bytes.withUnsafeBytes { decode($0) }
  }

  /// Reads an 8-byte big-endian integer; `nil` unless there are exactly 8 bytes.
  public static func decode(_ bytes: UnsafeRawBufferPointer) -> UInt64? {
    guard bytes.count == 8 else { return nil }
    return bytes.integer(UInt64.self, at: 0, .bigEndian)
  }
}

extension MDB_val {
  /// A key or value LMDB reads from `bytes`, valid while `bytes` is.
  ///
  /// LMDB never writes through a value it is given (it copies keys and values into its own
  /// pages), which is why the pointer may be taken as mutable.
  init(_ bytes: UnsafeRawBufferPointer) {
    self.init(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
  }
}
