internal import EventGraphCrypto
import EventGraphLocking
internal import EventGraphText
import Foundation
internal import LMDB

/// The keys of a store's personal data (Docs/privacy.md): one random data key per subject,
/// wrapped by the key-encryption key and kept in the store's subject-key file, where an
/// erasure overwrites it in place; the `subjects` database says which slot holds whose key
/// and whether the subject was erased.
///
/// Shared by every handle of the store in a process, and safe from several threads: the
/// file is written only inside LMDB write transactions, which LMDB serializes across
/// processes, and unwrapped keys are cached under a lock.
final class Keyring: Sendable {
  /// The key-encryption key; `nil` when the store was opened without it (personal values
  /// then read as locked, and no commit may be written).
  let kek: SymmetricKey?
  /// Where the key-encryption key came from, for messages: the key file's path, or
  /// `bytes given in Swift`.
  let kekSource: String
  /// The key of the blind hashes that index personal values (wrapped in `meta`).
  let blindKey: SymmetricKey?
  /// `nil` only for a read-only open of a copy made without it (the check a compaction
  /// makes of its copy): its personal values then read as damaged when opened.
  let file: SubjectKeyFile?
  let subjects: Database
  let meta: Database
  let path: String
  let storeIDText: String
  /// Unwrapped data keys by subject, at most ``cacheLimit``: emptied when full, so that a
  /// process that reads every subject of a large store does not keep every key.
  private let cache = Locked<[UInt64: SymmetricKey]>([:])
  static let cacheLimit = 65_536

  private func remember(_ key: SymmetricKey, for subject: ObjectID) {
    cache.withLock {
      if $0.count >= Self.cacheLimit { $0.removeAll(keepingCapacity: true) }
      $0[subject.rawValue] = key
    }
  }
  /// Whether a slot was written since the last sync (a new subject's key).
  private let unsynced = Locked<Bool>(false)
  /// The key check in `meta` when this keyring opened: a rotation since then changes it.
  private let openedCheck = Locked<[UInt8]?>(nil)

  /// Refuses a change of the subject-key file when the store's key was rotated since this
  /// keyring opened: the file it holds open is the one the rotation replaced.
  private func requireUnrotated(in txn: borrowing some TransactionReading & ~Copyable) throws {
    let now = try txn.get(meta, key: PrivacyKey.keyCheck)
    guard let opened = openedCheck.withLock({ $0 }), now != opened else { return }
    throw StoreError.wrongKey(
      path: path, keyFile: kekSource,
      detail: "the store's key-encryption key was rotated since it was opened here: open it again with the new key")
  }

  /// The name of the file of wrapped subject keys, in the store's directory.
  static let fileName = "subject-keys"

  private init(
    kek: SymmetricKey?, kekSource: String, blindKey: SymmetricKey?, file: SubjectKeyFile?, subjects: Database,
    meta: Database, path: String, storeID: String
  ) {
    self.storeIDText = storeID
    self.kek = kek
    self.kekSource = kekSource
    self.blindKey = blindKey
    self.file = file
    self.subjects = subjects
    self.meta = meta
    self.path = path
  }

  // MARK: - Opening

  /// The keyring of the store at `path`, or `nil` when the store keeps no personal data
  /// (its model has no personal attribute and it never had keys).
  ///
  /// A writable open of a store whose model has personal attributes sets the keyring up
  /// on first use (the check value of the key-encryption key and the blind-hash key) and
  /// finishes the destruction of keys that an erasure committed but did not overwrite yet
  /// (a process killed in between).
  static func open(
    env: Environment, meta: Database, path: String, storeID: String, model: Model, key: StoreKeySource?,
    writable: Bool
  ) throws -> Keyring? {
    let hasKeys = try env.read { try $0.contains(meta, key: PrivacyKey.keyCheck) }
    guard hasKeys || model.hasPersonalAttributes else { return nil }
    let source = key?.source ?? "no key"
    let kek: SymmetricKey?
    do {
      kek = try key?.load()
    } catch {
      throw StoreError.wrongKey(path: path, keyFile: source, detail: error.description)
    }
    guard writable || hasKeys else {
      // A read-only store that never had keys holds no personal value.
      return nil
    }
    if !hasKeys, kek == nil {
      throw StoreError.keyRequired(
        path: path,
        detail: "its model has personal attributes, and the store is set up for them with its key-encryption key only")
    }
    let identity = Self.identity(storeID)
    let file: SubjectKeyFile?
    var filePath = path + "/" + fileName
    if let pending = try Self.finishRekey(env: env, meta: meta, path: path, identity: identity, writable: writable) {
      filePath = pending
    }
    do {
      file =
        !writable && !FileManager.default.fileExists(atPath: filePath)
        ? nil : try SubjectKeyFile(path: filePath, storeIdentity: identity, create: writable)
    } catch {
      throw StoreError.damaged(path: path, detail: "the subject-key file: \(error.description)")
    }
    guard let subjects = try env.openDatabase("subjects", create: writable) else {
      throw StoreError.damaged(path: path, detail: "the store has keys but no 'subjects' database")
    }
    var blindKey: SymmetricKey? = nil
    if let kek {
      blindKey =
        hasKeys
        ? try env.read { txn in
          try Self.check(txn, meta: meta, kek: kek, identity: identity, path: path, source: source)
        }
        : try env.write { txn in try Self.setUp(txn, meta: meta, kek: kek, identity: identity) }
    }
    let ring = Keyring(
      kek: kek, kekSource: source, blindKey: blindKey, file: file, subjects: subjects, meta: meta, path: path,
      storeID: storeID)
    if writable { try ring.finishErasures(env) }
    ring.openedCheck.withLock { $0 = try? env.read { try $0.get(meta, key: PrivacyKey.keyCheck) } }
    return ring
  }

  /// Writes the check value of the key-encryption key and a new blind-hash key; the
  /// blind-hash key.
  ///
  /// A snapshot passes its source's blind-hash key (`blind`), so that the blind hashes its
  /// copied sealed values carry still match the values; otherwise a new one is made.
  static func setUp(
    _ txn: borrowing WriteTransaction, meta: Database, kek: SymmetricKey, identity: [UInt8],
    blind: SymmetricKey = .random()
  ) throws -> SymmetricKey {
    try txn.put(meta, key: PrivacyKey.keyCheck, value: Seal.seal(Self.checkText, key: kek, additionalData: identity))
    try txn.put(meta, key: PrivacyKey.blindKey, value: Seal.wrap(blind, with: kek, additionalData: identity))
    return blind
  }

  /// Checks the key-encryption key against the store's check value; the blind-hash key,
  /// unwrapped.
  private static func check(
    _ txn: borrowing ReadTransaction, meta: Database, kek: SymmetricKey, identity: [UInt8], path: String,
    source: String
  ) throws -> SymmetricKey {
    guard let check = try txn.get(meta, key: PrivacyKey.keyCheck),
      let wrapped = try txn.get(meta, key: PrivacyKey.blindKey)
    else {
      throw StoreError.damaged(path: path, detail: "the key check or the blind-hash key is missing from meta")
    }
    let opened: [UInt8]
    do {
      opened = try Seal.open(check, key: kek, additionalData: identity)
    } catch {
      throw StoreError.wrongKey(
        path: path, keyFile: source,
        detail: "it is not the key this store was made with (its check value does not open)")
    }
    guard opened == Self.checkText else {
      throw StoreError.damaged(path: path, detail: "the key check opens to other text")
    }
    do {
      return try Seal.unwrap(wrapped, with: kek, additionalData: identity)
    } catch {
      throw StoreError.damaged(path: path, detail: "the blind-hash key does not open: \(error.description)")
    }
  }

  static let checkText = Array("eventgraph key check 1".utf8)

  /// 16 bytes that name the store in the subject-key file's header and in every wrap.
  static func identity(_ storeID: String) -> [UInt8] {
    if let u = UUID(uuidString: storeID) {
      let t = u.uuid
      return [t.0, t.1, t.2, t.3, t.4, t.5, t.6, t.7, t.8, t.9, t.10, t.11, t.12, t.13, t.14, t.15]
    }
    return Array(SHA256.digest(Array(storeID.utf8)).prefix(16))
  }

  // MARK: - Subjects

  /// A subject's entry in `subjects`: its slot in the file and whether it was erased.
  struct Entry: Equatable {
    var slot: UInt32
    var erased: Bool

    var bytes: [UInt8] {
      [
        UInt8(slot >> 24), UInt8(truncatingIfNeeded: slot >> 16), UInt8(truncatingIfNeeded: slot >> 8),
        UInt8(truncatingIfNeeded: slot), erased ? 2 : 1,
      ]
    }

    init(slot: UInt32, erased: Bool) {
      self.slot = slot
      self.erased = erased
    }

    init?(_ b: [UInt8]) {
      guard b.count == 5, b[4] == 1 || b[4] == 2 else { return nil }
      slot = UInt32(b[0]) << 24 | UInt32(b[1]) << 16 | UInt32(b[2]) << 8 | UInt32(b[3])
      erased = b[4] == 2
    }
  }

  func entry(_ subject: ObjectID, in txn: borrowing some TransactionReading & ~Copyable) throws -> Entry? {
    guard let b = try txn.get(subjects, key: BigEndianKey(subject.rawValue)) else { return nil }
    guard let e = Entry(b) else {
      throw StoreError.damaged(path: path, detail: "the 'subjects' entry of #\(subject.rawValue) is malformed")
    }
    return e
  }

  /// The data key of a subject that is not erased; `nil` for an erased subject or one
  /// that has no key yet.
  func dataKey(_ subject: ObjectID, in txn: borrowing some TransactionReading & ~Copyable) throws -> SymmetricKey? {
    guard kek != nil, let e = try entry(subject, in: txn), !e.erased else { return nil }
    return try dataKey(subject, e)
  }

  /// The data key of a subject whose entry, not erased, is `e`: from the cache, or
  /// unwrapped from its slot.
  private func dataKey(_ subject: ObjectID, _ e: Entry) throws -> SymmetricKey? {
    guard let kek else { return nil }
    if let k = cache.withLock({ $0[subject.rawValue] }) { return k }
    guard let slot = try readSlot(e.slot), slot.subject == subject.rawValue else {
      throw StoreError.damaged(
        path: path, detail: "the key of #\(subject.rawValue) is missing from slot \(e.slot) of \(filePath)")
    }
    let key: SymmetricKey
    do {
      key = try Seal.unwrap(slot.wrapped, with: kek, additionalData: wrapContext(subject))
    } catch {
      throw StoreError.damaged(
        path: path, detail: "the key of #\(subject.rawValue) in slot \(e.slot) of \(filePath) does not open")
    }
    remember(key, for: subject)
    return key
  }

  /// The data key of `subject`, made when it has none: a random key, wrapped into the
  /// next slot of the file, its entry put in `txn`.
  ///
  /// - Throws: ``StoreError/Code/erasedSubject`` for an erased subject.
  func dataKey(creatingFor subject: ObjectID, in txn: WriteHandle) throws -> SymmetricKey {
    guard kek != nil else { throw StoreError.keyRequired(path: path, detail: "a new subject's key is wrapped by it") }
    // One read of the entry: it says whether the subject was erased (in this process or
    // another) before the cache is asked.
    if let e = try entry(subject, in: txn) {
      if e.erased {
        throw StoreError.erasedSubject(
          object: StoreError.ObjectName(entity: nil, id: subject),
          subject: StoreError.ObjectName(entity: nil, id: subject))
      }
      if let k = try dataKey(subject, e) { return k }
    }
    let key = SymmetricKey.random()
    try keep(key, for: subject, in: txn)
    return key
  }

  /// Keeps `key` as the data key of `subject`, which has none here: how a snapshot takes
  /// the keys of the subjects whose sealed values it copies (the values stay as they are,
  /// sealed under the same key, since a snapshot keeps identities).
  func adopt(_ key: SymmetricKey, for subject: ObjectID, in txn: WriteHandle) throws {
    guard kek != nil else { throw StoreError.keyRequired(path: path, detail: "a subject's key is wrapped by it") }
    guard try entry(subject, in: txn) == nil else { return }
    try keep(key, for: subject, in: txn)
  }

  /// Wraps `key` into the next slot of the file and puts `subject`'s entry in `txn`.
  private func keep(_ key: SymmetricKey, for subject: ObjectID, in txn: WriteHandle) throws {
    guard let kek else { throw StoreError.keyRequired(path: path, detail: "a subject's key is wrapped by it") }
    try requireUnrotated(in: txn)
    // A slot written by a transaction that was then rolled back is taken again here, as
    // nothing refers to it.
    let slot = try nextSlot(in: txn)
    do {
      try requireFile().write(
        slot: slot, subject: subject.rawValue, wrapped: Seal.wrap(key, with: kek, additionalData: wrapContext(subject)))
    } catch {
      throw StoreError.damaged(path: path, detail: "\(error)")
    }
    unsynced.withLock { $0 = true }
    try txn.put(subjects, key: BigEndianKey(subject.rawValue), value: Entry(slot: slot, erased: false).bytes)
    let next = slot + 1
    try txn.put(
      meta, key: PrivacyKey.nextSlot,
      value: [
        UInt8(next >> 24), UInt8(truncatingIfNeeded: next >> 16), UInt8(truncatingIfNeeded: next >> 8),
        UInt8(truncatingIfNeeded: next),
      ])
    remember(key, for: subject)
  }

  func nextSlot(in txn: borrowing some TransactionReading & ~Copyable) throws -> UInt32 {
    guard let stored = try txn.get(meta, key: PrivacyKey.nextSlot), stored.count == 4 else { return 0 }
    return UInt32(stored[0]) << 24 | UInt32(stored[1]) << 16 | UInt32(stored[2]) << 8 | UInt32(stored[3])
  }

  /// Syncs the file when a slot was written since the last sync: called before a durable
  /// commit, so that a key is on the disk before the first commit sealed with it.
  func syncIfNeeded() throws {
    guard
      unsynced.withLock({ u in
        defer { u = false }
        return u
      })
    else { return }
    do { try file?.sync() } catch { throw StoreError.damaged(path: path, detail: error.description) }
  }

  private var filePath: String { path + "/" + Self.fileName }

  private func requireFile() throws -> SubjectKeyFile {
    guard let file else { throw StoreError.damaged(path: path, detail: "\(filePath) is missing") }
    return file
  }

  func readSlot(_ slot: UInt32) throws -> (subject: UInt64, wrapped: [UInt8])? {
    do {
      return try requireFile().read(slot: slot)
    } catch {
      throw StoreError.damaged(path: path, detail: "\(error)")
    }
  }

  func wrapContext(_ subject: ObjectID) -> [UInt8] {
    Self.identity(storeIDText) + KeyField.bytes(subject.rawValue)
  }

  // MARK: - Sealing and opening

  /// Seals `value` under `subject`'s key (made on first use), with a blind hash when the
  /// attribute is indexed or unique.
  func seal(_ value: Value, subject: ObjectID, hashed: Bool, in txn: WriteHandle) throws -> SealedValue {
    let key = try dataKey(creatingFor: subject, in: txn)
    var w = BinaryWriter(capacity: BinaryWriter.estimatedSize(of: value))
    w.value(value)
    let sealed = Seal.seal(w.bytes, key: key, additionalData: Self.valueContext(subject, value.type))
    return SealedValue(
      type: value.type, subject: subject, blindHash: hashed ? blindHash(value) : [], ciphertext: sealed)
  }

  /// Whether plain values can be blind-hashed: the store was opened with its key.
  var canHash: Bool { blindKey != nil }

  /// The blind hash of a plain value: what the index and uniqueness keys of a personal
  /// attribute hold, and what a fetch by equality looks up.
  func blindHash(_ value: Value) -> [UInt8] {
    guard let blindKey else { return [] }
    var exact: [UInt8] = [value.type.code]
    UniquenessIndex.appendExact(value, to: &exact)
    return BlindHash.hash(exact, key: blindKey)
  }

  /// The plain value inside `sealed`, or `sealed` marked erased or locked when no key
  /// opens it.
  ///
  /// - Throws: ``ErrorCode/damaged`` when the key is there and the value
  ///   does not open: damage is reported, never served as a value.
  func open(_ sealed: SealedValue, in txn: borrowing some TransactionReading & ~Copyable) throws -> Value {
    var marked = sealed
    // What an erasure left (its ciphertext dropped) reads as erased with a key or without.
    guard !sealed.isTombstone else {
      marked.state = .erased
      return .sealed(marked)
    }
    guard kek != nil else {
      marked.state = .locked
      return .sealed(marked)
    }
    guard let key = try dataKey(sealed.subject, in: txn) else {
      marked.state = .erased
      return .sealed(marked)
    }
    let plain: [UInt8]
    do {
      plain = try Seal.open(
        sealed.ciphertext, key: key, additionalData: Self.valueContext(sealed.subject, sealed.type))
    } catch {
      throw StoreError.damaged(
        path: path, detail: "a personal value of #\(sealed.subject.rawValue) does not open: \(error.description)")
    }
    let value: Value? = try plain.withUnsafeBytes { raw in
      var r = BinaryReader(raw)
      return try r.value()
    }
    guard let value, value.type == sealed.type else {
      throw StoreError.damaged(
        path: path, detail: "a personal value of #\(sealed.subject.rawValue) opens to another type")
    }
    return value
  }

  /// Every sealed value of `state` opened.
  func open(_ state: ObjectState, in txn: borrowing some TransactionReading & ~Copyable) throws -> ObjectState {
    var opened = state
    for i in state.values.indices {
      if case .sealed(let s)? = state.values[i] { opened.values[i] = try open(s, in: txn) }
    }
    return opened
  }

  private static func valueContext(_ subject: ObjectID, _ type: AttributeType) -> [UInt8] {
    KeyField.bytes(subject.rawValue) + [type.code]
  }

  // MARK: - Erasure

  /// Marks `subject` erased in `txn` and notes its slot for destruction.
  ///
  /// The slot is overwritten once the commit holds; `false` when it was erased already. A subject that never had a key is marked
  /// too, so that no key is ever made for it.
  func markErased(_ subject: ObjectID, in txn: WriteHandle) throws -> Bool {
    let old = try entry(subject, in: txn)
    if old?.erased == true { return false }
    try requireUnrotated(in: txn)
    let slot = old?.slot ?? UInt32.max
    try txn.put(subjects, key: BigEndianKey(subject.rawValue), value: Entry(slot: slot, erased: true).bytes)
    if old != nil {
      var pending = try txn.get(meta, key: PrivacyKey.erasing) ?? []
      pending += Entry(slot: slot, erased: true).bytes.prefix(4)
      try txn.put(meta, key: PrivacyKey.erasing, value: pending)
    }
    cache.withLock { $0[subject.rawValue] = nil }
    return true
  }

  /// Overwrites, in place and synced, the slots of the erasures committed and not yet
  /// destroyed, then clears their list: run after every commit that erased, and when the
  /// store opens for writing (a process killed in between).
  func finishErasures(_ env: Environment) throws {
    let pending = try env.read { try $0.get(meta, key: PrivacyKey.erasing) } ?? []
    guard !pending.isEmpty else { return }
    cache.withLock { $0.removeAll() }
    do {
      for i in stride(from: 0, to: pending.count - 3, by: 4) {
        let slot =
          UInt32(pending[i]) << 24 | UInt32(pending[i + 1]) << 16 | UInt32(pending[i + 2]) << 8
          | UInt32(pending[i + 3])
        try requireFile().erase(slot: slot)
      }
    } catch {
      throw StoreError.damaged(path: path, detail: "\(error)")
    }
    try env.write { txn in
      // Only the slots destroyed here: another process may have added some since.
      let now = try txn.get(meta, key: PrivacyKey.erasing) ?? []
      let rest = Array(now.dropFirst(pending.count))
      if rest.isEmpty {
        _ = try txn.delete(meta, key: PrivacyKey.erasing)
      } else {
        try txn.put(meta, key: PrivacyKey.erasing, value: rest)
      }
    }
  }
}

/// Keys of `meta` that the keyring keeps.
enum PrivacyKey {
  /// A fixed text sealed by the key-encryption key: a wrong key is told from damage.
  static let keyCheck = "privacy.keyCheck"
  /// The blind-hash key, wrapped by the key-encryption key.
  static let blindKey = "privacy.blindKey"
  /// The slot the next new subject's key takes (u32 BE).
  static let nextSlot = "privacy.nextSlot"
  /// The slots (u32 BE each) of erasures committed whose keys are still to be overwritten.
  static let erasing = "privacy.erasing"
  /// Set by a key rotation's commit until its new subject-key file replaced the old one
  /// (the new key's source, for messages).
  static let rotating = "privacy.rotating"
}

extension Keyring {
  /// The raw data key of a subject, for the tests that search the store's files for it
  /// after an erasure; never used by the store.
  func testingDataKey(_ subject: ObjectID, in txn: borrowing some TransactionReading & ~Copyable) throws -> [UInt8]? {
    try dataKey(subject, in: txn)?.bytesForTesting
  }
}
