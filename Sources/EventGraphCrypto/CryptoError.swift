/// An error of the crypto layer: what went wrong, with the key file or slot file at fault.
///
/// New codes can appear without breaking callers: compare `error.code` with the static
/// constants of ``Code`` (`error.code == .keyFileMode`) rather than switching over them.
/// The message is a full sentence that names the file, for the user to read as it is.
public struct CryptoError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of failure this is; a struct of static constants so that codes can be added.
  public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The code's name, as the constant is spelled (`"keyFileMode"`).
    public let rawValue: String

    /// A code named `rawValue`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The code's name.
    public var description: String { rawValue }

    /// The key file does not exist.
    public static let keyFileMissing = Code(rawValue: "keyFileMissing")
    /// A new key file was asked for where a file already is (it is never overwritten).
    public static let keyFileExists = Code(rawValue: "keyFileExists")
    /// The key file does not hold exactly ``SymmetricKey/byteCount`` bytes.
    public static let keyFileSize = Code(rawValue: "keyFileSize")
    /// The key file can be read or written by its group or by others.
    public static let keyFileMode = Code(rawValue: "keyFileMode")
    /// The key file is a directory, a device, a pipe or a socket rather than a regular file.
    public static let keyFileNotRegular = Code(rawValue: "keyFileNotRegular")
    /// The key file could not be created, read, written or flushed.
    public static let keyFileIO = Code(rawValue: "keyFileIO")
    /// A seal did not open: the key or the additional data is not the one it was sealed
    /// with, or its bytes were damaged.
    public static let authenticationFailed = Code(rawValue: "authenticationFailed")
    /// Bytes that cannot be what they claim: sealed bytes shorter than ``Seal/overhead``, a
    /// key of the wrong length, a slot file header or slot that is wrong.
    public static let malformed = Code(rawValue: "malformed")
    /// The slot file could not be opened, created, read, written or flushed.
    public static let slotFileIO = Code(rawValue: "slotFileIO")
    /// The slot file belongs to another store (its header names another store identity).
    public static let slotFileForeign = Code(rawValue: "slotFileForeign")
    /// libsodium could not be initialised (`sodium_init` failed).
    public static let libsodium = Code(rawValue: "libsodium")
  }

  /// What kind of failure this is.
  public let code: Code
  /// The key file or slot file concerned, when there is one.
  public let path: String?
  /// A full sentence naming what went wrong and where.
  public let message: String

  /// An error of kind `code` about the file at `path`, explained by `message`.
  public init(code: Code, path: String?, message: String) {
    self.code = code
    self.path = path
    self.message = message
  }

  /// The message.
  public var description: String { message }
}
