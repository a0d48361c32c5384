internal import CNATS
import Foundation

/// A JetStream key-value bucket: entries with revisions, compare-and-set writes, and a
/// time to live after which an entry that was not written again is gone.
///
/// The leases of replication's automatic failover live in one: an entry is created only
/// where none is, updated only at the revision its writer last saw, and lapses by itself
/// when its holder stops renewing it.
public final class KeyValue: @unchecked Sendable {
  // Safety of @unchecked Sendable: nats.c's kvStore is safe to share between threads; it
  // is bound once in init and destroyed once in deinit.
  private let store: OpaquePointer
  public let bucket: String
  /// Keeps the JetStream context (and its connection) open while the bucket is used.
  public let jetStream: JetStream

  /// An entry as the bucket holds it.
  public struct Entry: Sendable, Hashable {
    public let value: [UInt8]
    /// Its place in the bucket's history: a compare-and-set names it.
    public let revision: UInt64
  }

  /// Binds to `bucket`, creating it (file storage) when it does not exist.
  ///
  /// - Parameters:
  ///   - ttl: how long an entry lives after it was last written, in seconds; fixed when
  ///     the bucket is created.
  ///   - replicas: how many servers keep it.
  public init(jetStream: JetStream, bucket: String, ttl: Double, replicas: Int) throws(NATSError) {
    self.jetStream = jetStream
    self.bucket = bucket
    var kv: OpaquePointer?
    let status = js_KeyValue(&kv, jetStream.context, bucket)
    if status == NATS_NOT_FOUND || (status != NATS_OK && kv == nil) {
      var config = kvConfig()
      kvConfig_Init(&config)
      config.History = 1
      config.TTL = Int64(ttl * 1_000_000_000)
      config.Replicas = Int32(replicas)
      config.StorageType = js_FileStorage
      // The bucket's C string lives through the call, which copies the configuration.
      let created = bucket.withCString { name in
        config.Bucket = name
        return js_CreateKeyValue(&kv, jetStream.context, &config)
      }
      try check(created, doing: "creating key-value bucket '\(bucket)'")
    } else {
      try check(status, doing: "opening key-value bucket '\(bucket)'")
    }
    guard let kv else { throw NATSError(NATS_ERR, doing: "opening key-value bucket '\(bucket)'") }
    self.store = kv
  }

  /// Binds to `bucket` if it exists; `nil` when it does not (nothing is created).
  public init?(jetStream: JetStream, existing bucket: String) throws(NATSError) {
    self.jetStream = jetStream
    self.bucket = bucket
    var kv: OpaquePointer?
    let status = js_KeyValue(&kv, jetStream.context, bucket)
    if status == NATS_NOT_FOUND { return nil }
    try check(status, doing: "opening key-value bucket '\(bucket)'")
    guard let kv else { return nil }
    self.store = kv
  }

  deinit { kvStore_Destroy(store) }

  /// The entry at `key`; `nil` when there is none (never written, deleted, or lapsed).
  public func get(_ key: String) throws(NATSError) -> Entry? {
    var entry: OpaquePointer?
    let status = kvStore_Get(&entry, store, key)
    if status == NATS_NOT_FOUND { return nil }
    try check(status, doing: "reading '\(key)' of bucket '\(bucket)'")
    guard let entry else { return nil }
    defer { kvEntry_Destroy(entry) }
    let length = Int(kvEntry_ValueLen(entry))
    var value: [UInt8] = []
    if length > 0, let bytes = kvEntry_Value(entry) {
      // kvEntry_Value points at the entry's `length` bytes, alive until it is destroyed.
      value = Array(UnsafeRawBufferPointer(start: bytes, count: length))
    }
    return Entry(value: value, revision: kvEntry_Revision(entry))
  }

  /// Writes `value` at `key` only where the bucket holds no entry; the new revision, or
  /// `nil` when another writer's entry is there.
  public func create(_ key: String, _ value: [UInt8]) throws(NATSError) -> UInt64? {
    try conditional("creating '\(key)' in bucket '\(bucket)'", lost: { () throws(NATSError) in try get(key) != nil }) {
      revision in
      value.withUnsafeBytes { kvStore_Create(&revision, store, key, $0.baseAddress, Int32($0.count)) }
    }
  }

  /// Writes `value` at `key` only if the entry there is still at `revision`; the new
  /// revision, or `nil` when it was written since (or lapsed).
  public func update(_ key: String, _ value: [UInt8], revision last: UInt64) throws(NATSError) -> UInt64? {
    try conditional(
      "updating '\(key)' in bucket '\(bucket)'", lost: { () throws(NATSError) in try get(key)?.revision != last }
    ) { revision in
      value.withUnsafeBytes { kvStore_Update(&revision, store, key, $0.baseAddress, Int32($0.count), last) }
    }
  }

  /// Writes `value` at `key` whatever is there; the new revision.
  public func put(_ key: String, _ value: [UInt8]) throws(NATSError) -> UInt64 {
    var revision: UInt64 = 0
    let status = value.withUnsafeBytes { kvStore_Put(&revision, store, key, $0.baseAddress, Int32($0.count)) }
    try check(status, doing: "writing '\(key)' in bucket '\(bucket)'")
    return revision
  }

  /// Removes the entry at `key` (a deletion marker; ``create(_:_:)`` may write there again).
  public func delete(_ key: String) throws(NATSError) {
    try check(kvStore_Delete(store, key), doing: "deleting '\(key)' of bucket '\(bucket)'")
  }

  /// Runs a compare-and-set write; `nil` when it was refused because the entry is not what
  /// the write expected — which `lost`, read after the refusal, says (nats.c reports the
  /// refusal as a plain error).
  private func conditional(
    _ what: String, lost: () throws(NATSError) -> Bool, _ write: (inout UInt64) -> natsStatus
  ) throws(NATSError) -> UInt64? {
    var revision: UInt64 = 0
    let status = write(&revision)
    if status == NATS_OK { return revision }
    let error = NATSError(status, doing: what)
    if error.isTransient { throw error }
    if try lost() { return nil }
    throw error
  }
}
