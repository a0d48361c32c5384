import Foundation

/// What a program run by a test printed, and how it ended.
public struct ProgramResult: Sendable {
  public var status: Int32
  public var out: String
  public var err: String
}

/// Runs the program at `url` with `arguments`, feeding it `input`, and waits for it.
public func runProgram(
  at url: URL, _ arguments: [String], input: String? = nil, environment: [String: String]? = nil
) throws -> ProgramResult {
  let process = Process()
  process.executableURL = url
  process.arguments = arguments
  if let environment { process.environment = environment }
  let out = Pipe()
  let err = Pipe()
  let stdin = Pipe()
  process.standardOutput = out
  process.standardError = err
  process.standardInput = stdin
  try process.run()
  if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
  try stdin.fileHandleForWriting.close()
  // Read both pipes before waiting, so a full pipe cannot block the child.
  let outData = out.fileHandleForReading.readDataToEndOfFile()
  let errData = err.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  return ProgramResult(
    status: process.terminationStatus, out: String(decoding: outData, as: UTF8.self),
    err: String(decoding: errData, as: UTF8.self))
}
