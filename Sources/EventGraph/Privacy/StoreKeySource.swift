internal import EventGraphCrypto

/// Where a store's key-encryption key comes from (``StoreOptions/keyFile`` or
/// ``StoreOptions/keyBytes``).
enum StoreKeySource: Sendable {
  case file(String)
  case bytes([UInt8])

  /// The source as messages name it.
  var source: String {
    switch self {
    case .file(let path): path
    case .bytes: "the key bytes given in StoreOptions"
    }
  }

  func load() throws(CryptoError) -> SymmetricKey {
    switch self {
    case .file(let path): try KeyFile.load(from: path)
    case .bytes(let b): try SymmetricKey(bytes: b)
    }
  }
}

extension StoreOptions {
  var keySource: StoreKeySource? {
    if let keyFile { return .file(keyFile) }
    if let keyBytes { return .bytes(keyBytes) }
    return nil
  }
}

extension EventStore {
  /// Writes a new random key-encryption key to `path` (32 bytes, mode 0600), never
  /// overwriting a file that exists (`eventtool keygen`).
  ///
  /// - Throws: ``ErrorCode/wrongKey`` naming the file when it exists or cannot be
  ///   written.
  public static func generateKeyFile(at path: String) throws {
    do {
      _ = try KeyFile.generate(at: path)
    } catch {
      throw StoreError.wrongKey(path: path, keyFile: path, detail: error.description)
    }
  }
}
