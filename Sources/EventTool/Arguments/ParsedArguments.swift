/// The arguments of one command, parsed against its ``CommandSpec``.
///
/// Values are looked up by the names the spec declares: positionals by their
/// placeholder (`"STORE"`), options by their long name without dashes (`"batch"`).
public struct ParsedArguments: Sendable, Hashable {
  /// The name of the command these arguments were given to.
  let commandName: String
  private let positionals: [String: String]
  private let optionValues: [String: [String]]
  private let flags: Set<String>
  /// Whether `-h` or `--help` appeared (before any `--`).
  ///
  /// When it did, nothing else was
  /// checked: the caller shows help and exits.
  public let helpRequested: Bool

  init(
    commandName: String, positionals: [String: String] = [:], optionValues: [String: [String]] = [:],
    flags: Set<String> = [], helpRequested: Bool = false
  ) {
    self.commandName = commandName
    self.positionals = positionals
    self.optionValues = optionValues
    self.flags = flags
    self.helpRequested = helpRequested
  }

  /// The positional argument `name` (`"STORE"`), or nil when an optional one was left out.
  public func positional(_ name: String) -> String? {
    positionals[name]
  }

  /// The value of option `option` (`"batch"`), or nil when it was not given.
  ///
  /// For a
  /// repeatable option, the last value.
  public func value(_ option: String) -> String? {
    optionValues[option]?.last
  }

  /// Every value of option `option`, in command-line order; empty when it was not given.
  public func values(_ option: String) -> [String] {
    optionValues[option] ?? []
  }

  /// Whether flag `option` (`"json"`) was given.
  public func flag(_ option: String) -> Bool {
    flags.contains(option)
  }

  /// The value of option `option` as an integer, or nil when it was not given.
  ///
  /// - Throws: ``ArgumentError`` naming the option and the text when the value is not
  ///   an integer.
  public func int(_ option: String) throws(ArgumentError) -> Int? {
    guard let text = value(option) else { return nil }
    guard let number = Int(text) else {
      throw ArgumentError.invalidValue(text, for: option, command: commandName, expected: "an integer")
    }
    return number
  }
}
