/// The description of one subcommand: everything parsing, `--help`, the command list,
/// the Markdown reference and the shell completion are generated from.
///
/// A command is described once, as data, so its help can never disagree with what it
/// accepts:
///
/// ```swift
/// let importCommand = CommandSpec(
///   name: "import",
///   abstract: "Import objects from a JSON Lines file in one commit.",
///   positionals: [
///     PositionalSpec("STORE", help: "The store directory."),
///     PositionalSpec("FILE", help: "The JSON Lines file, or '-' for standard input."),
///   ],
///   options: [OptionSpec("batch", valueName: "N", help: "Commit every N objects.")],
///   examples: ["eventtool import shop.store objects.jsonl --batch 1000"])
/// ```
public struct CommandSpec: Sendable, Hashable {
  /// The word that selects the command: `import`.
  public var name: String
  /// One sentence for the command list and the top of `--help`.
  public var abstract: String
  /// Longer text for `--help` and the reference; line breaks are kept, long lines wrapped.
  public var discussion: String?
  /// The positional arguments in order; optional ones come last.
  public var positionals: [PositionalSpec]
  /// The options, in the order help lists them.
  ///
  /// `-h`/`--help` is implicit.
  public var options: [OptionSpec]
  /// Complete command lines as a user types them, starting with the tool's name.
  public var examples: [String]

  public init(
    name: String, abstract: String, discussion: String? = nil, positionals: [PositionalSpec] = [],
    options: [OptionSpec] = [], examples: [String]
  ) {
    self.name = name
    self.abstract = abstract
    self.discussion = discussion
    self.positionals = positionals
    self.options = options
    self.examples = examples
  }

  /// The option whose long name is `name` (without dashes).
  public func option(named name: String) -> OptionSpec? {
    options.first { $0.name == name }
  }
}

/// A positional argument, such as the `STORE` in `eventtool verify STORE`.
public struct PositionalSpec: Sendable, Hashable {
  /// The placeholder shown in usage and used to read the value back: `STORE`.
  public var name: String
  public var help: String
  /// Whether the argument may be left out; shown as `[NAME]`.
  public var isOptional: Bool

  public init(_ name: String, help: String, isOptional: Bool = false) {
    self.name = name
    self.help = help
    self.isOptional = isOptional
  }
}

/// A long option: a flag (`--json`) or an option with a value (`--batch N`).
public struct OptionSpec: Sendable, Hashable {
  /// The long name without dashes: `batch`.
  public var name: String
  /// The placeholder of the value (`N`), or nil for a flag.
  public var valueName: String?
  public var help: String
  /// Whether the option may be given more than once (`--set A=B --set C=D`).
  ///
  /// Values that
  /// are comma-separated lists are left to the command to split.
  public var isRepeatable: Bool
  /// Whether the command cannot run without it.
  public var isRequired: Bool

  public init(
    _ name: String, valueName: String? = nil, help: String, isRepeatable: Bool = false, isRequired: Bool = false
  ) {
    self.name = name
    self.valueName = valueName
    self.help = help
    self.isRepeatable = isRepeatable
    self.isRequired = isRequired
  }

  /// Whether the option stands alone, without a value.
  public var isFlag: Bool { valueName == nil }

  /// The option as usage shows it: `--batch N` or `--json`.
  public var synopsis: String {
    guard let valueName else { return "--\(name)" }
    return "--\(name) \(valueName)"
  }
}
