internal import EventGraphCrypto
import Foundation
internal import LMDB

/// What ``EventStore/rekey(at:options:newKeyFile:newKeyBytes:)`` did.
public struct RekeyReport: Sendable, Hashable {
  /// The subjects whose data keys are wrapped under the new key now.
  public let subjects: Int
  /// The erased subjects, whose slots hold no key and stay empty.
  public let erased: Int
  /// How long the rotation took, in seconds.
  public let seconds: Double
}

extension EventStore {
  /// Rotates the key-encryption key of a store of personal data: every subject's data key,
  /// the blind-hash key and the key check are wrapped again under the new key; the log,
  /// the sealed values and the blind hashes stay as they are (Docs/privacy.md, "Rotating
  /// the key-encryption key").
  ///
  /// The new subject-key file is written beside the old one and flushed; one LMDB commit
  /// then makes the new key the store's (from there on only the new key opens the store);
  /// the old file is overwritten with zeros and the new one renamed over it. A process
  /// killed anywhere leaves the store under the old key with nothing changed, or under the
  /// new one, finished by the next open.
  ///
  /// No other process may have the store open: one that opened it under the old key
  /// meanwhile is refused the writes that need the key (a new subject, an erasure) and must
  /// open it again with the new key.
  ///
  /// - Parameters:
  ///   - path: the store's directory.
  ///   - options: how to open it, with its current key (``StoreOptions/keyFile`` or
  ///     ``StoreOptions/keyBytes``).
  ///   - newKeyFile: the new key's file (``generateKeyFile(at:)`` makes one).
  ///   - newKeyBytes: the new key's 32 bytes, when no file is given.
  /// - Throws: `StoreError.Code.keyRequired` without a current or a new key, or for a store
  ///   that keeps no personal data; ``ErrorCode/wrongKey`` naming the key that does not
  ///   open the store or cannot be loaded; a ``MaintenanceError`` while another process has
  ///   the store open. Nothing is changed then.
  @discardableResult
  public static func rekey(
    at path: String, options: StoreOptions, newKeyFile: String? = nil, newKeyBytes: [UInt8]? = nil
  ) throws -> RekeyReport {
    try StoreError.reportingStorage(path: path) {
      let start = ContinuousClock.now
      guard FileManager.default.fileExists(atPath: path + "/data.mdb") else {
        throw StoreError.notAStore(path: path, detail: "no data.mdb in it")
      }
      var given = StoreOptions()
      given.keyFile = newKeyFile
      given.keyBytes = newKeyBytes
      guard let source = given.keySource else {
        throw StoreError.keyRequired(path: path, detail: "a rotation needs the new key-encryption key")
      }
      let newKEK: SymmetricKey
      do { newKEK = try source.load() } catch {
        throw StoreError.wrongKey(path: path, keyFile: source.source, detail: "\(error)")
      }
      if let other = try EnvironmentLock.otherUser(directory: path) {
        throw MaintenanceError("cannot rotate the key of \(path): \(other); stop it first")
      }
      var opening = options
      opening.readOnly = false
      let store = try EventStore(path: path, options: opening)
      guard let ring = store.dbs.keyring else {
        throw StoreError.keyRequired(
          path: path, detail: "it keeps no personal data, so no key-encryption key wraps anything in it")
      }
      let counts = try ring.rotate(store.env, to: newKEK, newSource: source.source)
      return RekeyReport(subjects: counts.subjects, erased: counts.erased, seconds: Self.seconds(since: start))
    }
  }
}

extension Keyring {
  /// The subject-key file a rotation writes before its commit.
  static let rotationFileName = "subject-keys.rotating"

  /// Wraps every key again under `newKEK`: the new file beside the old, flushed; then one
  /// LMDB commit of the new key check and blind-hash key with the mark of a rotation under
  /// way; then ``finishRekey(env:meta:path:identity:writable:)`` swaps the files.
  ///
  /// The write transaction is held while the new file is written, so no other writer of
  /// the store makes a key meanwhile.
  func rotate(_ env: Environment, to newKEK: SymmetricKey, newSource: String) throws -> (subjects: Int, erased: Int) {
    guard let kek, let blindKey else {
      throw StoreError.keyRequired(path: path, detail: "a rotation opens every subject's key with the current key")
    }
    let identity = Self.identity(storeIDText)
    let rotating = path + "/" + Self.rotationFileName
    var subjects = 0
    var erased = 0
    try env.write { txn in
      // A rotation killed before its commit left its file: nothing refers to it.
      try Self.destroy(rotating, identity: identity, path: path)
      let out: SubjectKeyFile
      do {
        out = try SubjectKeyFile(path: rotating, storeIdentity: identity, create: true)
      } catch {
        throw StoreError.damaged(path: path, detail: "the rotation's subject-key file: \(error)")
      }
      let end = try nextSlot(in: txn)
      var slot: UInt32 = 0
      while slot < end {
        defer { slot += 1 }
        guard let (subject, wrapped) = try readSlot(slot) else {
          erased += 1
          continue
        }
        let context = wrapContext(ObjectID(subject))
        let key: SymmetricKey
        do {
          key = try Seal.unwrap(wrapped, with: kek, additionalData: context)
        } catch {
          throw StoreError.damaged(path: path, detail: "the key of #\(subject) in slot \(slot) does not open")
        }
        do {
          try out.write(slot: slot, subject: subject, wrapped: Seal.wrap(key, with: newKEK, additionalData: context))
        } catch {
          throw StoreError.damaged(path: path, detail: "the rotation's subject-key file: \(error)")
        }
        subjects += 1
      }
      do { try out.sync() } catch {
        throw StoreError.damaged(path: path, detail: "the rotation's subject-key file: \(error)")
      }
      try FileSync.flush(path)
      try txn.put(
        meta, key: PrivacyKey.keyCheck, value: Seal.seal(Self.checkText, key: newKEK, additionalData: identity))
      try txn.put(meta, key: PrivacyKey.blindKey, value: Seal.wrap(blindKey, with: newKEK, additionalData: identity))
      try txn.put(meta, key: PrivacyKey.rotating, value: Array(newSource.utf8))
    }
    _ = try Self.finishRekey(env: env, meta: meta, path: path, identity: identity, writable: true)
    return (subjects, erased)
  }

  /// Finishes a rotation whose commit holds, or removes what a killed one left.
  ///
  /// With the rotation committed: the old subject-key file overwritten with zeros and
  /// replaced by the rotation's, the mark cleared; with none committed, a killed
  /// rotation's file is overwritten and removed. Run when a keyring opens.
  ///
  /// - Returns: the file to read keys from when a read-only open finds a rotation
  ///   committed but not finished (it changes nothing); `nil` otherwise.
  static func finishRekey(env: Environment, meta: Database, path: String, identity: [UInt8], writable: Bool) throws
    -> String?
  {
    let rotating = path + "/" + rotationFileName
    let current = path + "/" + fileName
    let committed = try env.read { try $0.contains(meta, key: PrivacyKey.rotating) }
    let present = FileManager.default.fileExists(atPath: rotating)
    guard committed else {
      if writable && present { try destroy(rotating, identity: identity, path: path) }
      return nil
    }
    guard writable else { return present ? rotating : nil }
    if present {
      try destroy(current, identity: identity, path: path, removing: false)
      guard rename(rotating, current) == 0 else {
        throw StoreError.damaged(
          path: path, detail: "cannot rename \(rotating) to \(current): \(String(cString: strerror(errno)))")
      }
      try FileSync.flush(path)
    }
    try env.write { txn in _ = try txn.delete(meta, key: PrivacyKey.rotating) }
    return nil
  }

  /// Overwrites a subject-key file's slots with zeros, flushed, and removes it; nothing
  /// when it does not exist.
  private static func destroy(_ file: String, identity: [UInt8], path: String, removing: Bool = true) throws {
    guard FileManager.default.fileExists(atPath: file) else { return }
    do {
      try SubjectKeyFile(path: file, storeIdentity: identity, create: true).eraseAll()
    } catch {
      throw StoreError.damaged(path: path, detail: "cannot overwrite \(file): \(error)")
    }
    if removing { try FileManager.default.removeItem(atPath: file) }
  }
}
