#!/usr/bin/env pwsh
# Build entry point (PowerShell 7, any OS). Each target runs the same dotnet command as README.md;
# arguments after the target are passed through unchanged, e.g.
#   ./build.ps1 run --port 7000
#   ./build.ps1 test --filter "FullyQualifiedName~SmokeTests"
#   ./build.ps1 bench --quick
#
#   build    dotnet build -c Release
#   test     dotnet test Diagnostics.sln -m:1 (test projects one at a time, see README)
#   run      dotnet run -c Release --project server -- <args>
#   bench    dotnet run -c Release --project tests/Diagnostics.Benchmarks -- <args>
#   publish  dotnet publish server -c Release -o artifacts/publish
#
# The script exits with dotnet's exit code.
#
# Deliberately a simple (not [CmdletBinding()]) script: the pass-through arguments arrive in $args
# as written, including ones that look like PowerShell parameters (-c, --port), which an
# advanced script would reject as unknown parameters.
param(
    [ValidateSet('build', 'test', 'run', 'bench', 'publish')]
    [string] $Target = 'build'
)

Set-StrictMode -Version Latest
$ErrorActionPreference = 'Stop'

if (-not (Get-Command dotnet -CommandType Application -ErrorAction SilentlyContinue)) {
    Write-Error 'dotnet was not found on PATH: install the .NET 10 SDK.'
    exit 1
}

[string[]] $passThrough = @($args | ForEach-Object { [string] $_ })

[string[]] $dotnetArguments = @(switch ($Target) {
    'build'   { @('build', '-c', 'Release') + $passThrough }
    'test'    { @('test', 'Diagnostics.sln', '-m:1') + $passThrough }
    'run'     { @('run', '-c', 'Release', '--project', 'server', '--') + $passThrough }
    'bench'   { @('run', '-c', 'Release', '--project', 'tests/Diagnostics.Benchmarks', '--') + $passThrough }
    'publish' { @('publish', 'server', '-c', 'Release', '-o', 'artifacts/publish') + $passThrough }
})

# The paths above (server, tests/..., artifacts/publish) are the repository's, wherever the
# script is called from; the caller's location is restored afterwards.
$exitCode = 1
Push-Location -LiteralPath $PSScriptRoot
try {
    Write-Host "> dotnet $($dotnetArguments -join ' ')"
    & dotnet @dotnetArguments
    $exitCode = $LASTEXITCODE
}
finally {
    Pop-Location
}

if ($exitCode -ne 0) {
    Write-Host "dotnet $Target failed with exit code $exitCode" -ForegroundColor Red
}
exit $exitCode
