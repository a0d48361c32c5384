/// A command line that cannot be run: what is wrong, and the command it was given to.
///
/// Kinds are constants of ``Kind`` rather than enum cases, so new kinds can be added
/// without breaking a caller's `switch`.
public struct ArgumentError: Error, Sendable, Hashable, CustomStringConvertible {
  /// What kind of mistake the command line has.
  public struct Kind: Sendable, Hashable, CustomStringConvertible {
    public let description: String
    private init(_ description: String) { self.description = description }

    public static let missingCommand = Kind("missing command")
    public static let unknownCommand = Kind("unknown command")
    public static let unknownOption = Kind("unknown option")
    public static let missingValue = Kind("missing value")
    public static let unexpectedValue = Kind("unexpected value")
    public static let missingArgument = Kind("missing argument")
    public static let missingOption = Kind("missing option")
    public static let unexpectedArgument = Kind("unexpected argument")
    public static let duplicateOption = Kind("duplicate option")
    public static let invalidValue = Kind("invalid value")
  }

  public let kind: Kind
  /// The command being parsed, or nil when the command itself is at fault.
  public let command: String?
  /// The word at fault: `--bach`, `STORE`, `improt`.
  public let subject: String
  /// The nearest valid spelling, for an unknown command or option: `--batch`, `import`.
  public let suggestion: String?
  /// The whole message: `unknown option '--bach' (did you mean '--batch'?)`.
  public let description: String

  init(_ kind: Kind, command: String?, subject: String, suggestion: String? = nil, message: String) {
    self.kind = kind
    self.command = command
    self.subject = subject
    self.suggestion = suggestion
    if let suggestion {
      self.description = "\(message) (did you mean '\(suggestion)'?)"
    } else {
      self.description = message
    }
  }

  /// A value the command refuses after parsing, such as `--at -1`.
  ///
  /// ```swift
  /// guard seq >= 1 else {
  ///   throw ArgumentError.invalidValue("-1", for: "at", command: "show", expected: "a sequence number of 1 or more")
  /// }
  /// ```
  public static func invalidValue(_ value: String, for option: String, command: String?, expected: String)
    -> ArgumentError
  {
    ArgumentError(
      .invalidValue, command: command, subject: "--\(option)",
      message: "invalid value '\(value)' for option '--\(option)': expected \(expected)")
  }

  /// A positional argument the command refuses after parsing, such as an ID that is not
  /// of the form `Entity/N`.
  public static func invalidArgument(_ value: String, for positional: String, command: String?, expected: String)
    -> ArgumentError
  {
    ArgumentError(
      .invalidValue, command: command, subject: positional,
      message: "invalid \(positional) '\(value)': expected \(expected)")
  }
}
