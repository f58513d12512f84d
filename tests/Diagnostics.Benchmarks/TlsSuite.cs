using System.Globalization;
using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text;

namespace Diagnostics.Benchmarks;

/// <summary>
/// RESP over TLS against redis-server over TLS, side by side in one run: redis-benchmark --tls
/// (SET and GET, client certificates as both servers require by default) at -P 1 and -P 30, and
/// the same loads on each server's plain port, so the report gives ours/redis under TLS and what
/// TLS costs each server. Rounds rotate the four targets; medians. CPU µs/req is the server
/// process's user + system time over the run divided by the requests. The certificates (a CA,
/// the servers' and the client's, RSA 2048) are made here with .NET's CertificateRequest.
/// </summary>
public sealed class TlsSuite(BenchmarkOptions options, string redisServer, string redisBenchmark, TextWriter progress)
{
    private static readonly CultureInfo Inv = CultureInfo.InvariantCulture;
    private static readonly string[] Tests = ["set", "get"];

    /// <summary>Where a load goes; <see cref="Tls"/> holds redis-benchmark's TLS arguments, empty for a plain port.</summary>
    private sealed record Target(string Name, ServerUnderTest Server, int Port, string[] Tls);

    public string Run()
    {
        using var files = ScratchDirectory.Create("diagnostics-bench-tls-");
        var certificates = Certificates.Write(files.Path);
        int oursTls = ServerUnderTest.FreePort();
        using var ours = ServerUnderTest.StartOurs([.. options.ServerArgs, "--tls-port", oursTls.ToString(Inv), .. certificates.ServerSettings]);
        int redisTls = ServerUnderTest.FreePort();
        // StartRedis takes its extra settings where persistence suites put theirs.
        using var redis = ServerUnderTest.StartRedis(redisServer, ["--appendonly", "no", "--tls-port", redisTls.ToString(Inv), .. certificates.ServerSettings]);
        Target[] targets =
        [
            new("ours TLS", ours, oursTls, certificates.ClientArguments), new("redis TLS", redis, redisTls, certificates.ClientArguments),
            new("ours plain", ours, ours.Port, []), new("redis plain", redis, redis.Port, []),
        ];
        progress.WriteLine($"tls: ours on {ours.Port} (TLS {oursTls}), redis on {redis.Port} (TLS {redisTls})");
        (int Pipeline, long Requests)[] loads = [(1, options.Requests), (30, options.PipelinedRequests)];

        foreach (var target in targets)
            foreach (var (pipeline, requests) in loads)
                Measure(target, pipeline, requests / 5);
        var samples = new Dictionary<(string Target, string Test, int Pipeline), List<(BenchmarkSample Sample, double CpuMicros)>>();
        for (int round = 0; round < options.Rounds; round++)
        {
            foreach (var (pipeline, requests) in loads)
            {
                for (int k = 0; k < targets.Length; k++)
                {
                    var target = targets[(k + round) % targets.Length];
                    foreach (var (sample, cpu) in Measure(target, pipeline, requests))
                    {
                        string test = sample.Test.Split(' ')[0].ToLowerInvariant();
                        var key = (target.Name, test, pipeline);
                        if (!samples.TryGetValue(key, out var list))
                            samples[key] = list = [];
                        list.Add((sample, cpu));
                        progress.WriteLine(string.Create(Inv, $"tls round {round + 1}/{options.Rounds}  {test.ToUpperInvariant(),-3} -P {pipeline,-2} {target.Name,-11} {sample.RequestsPerSecond,12:N0} rps  p99 {sample.P99Ms:0.000} ms  {cpu:0.00} us CPU/req"));
                    }
                }
            }
        }
        using var connection = ours.Connect();
        var tlsInfo = ServerInfo.Read(connection, "tls");

        double Rps(string target, string test, int pipeline) => Statistics.Median(samples[(target, test, pipeline)].Select(s => s.Sample.RequestsPerSecond));
        double P99(string target, string test, int pipeline) => Statistics.Median(samples[(target, test, pipeline)].Select(s => s.Sample.P99Ms));
        double Cpu(string target, string test, int pipeline) => Statistics.Median(samples[(target, test, pipeline)].Select(s => s.CpuMicros));

        var md = new StringBuilder();
        md.Append("\n### TLS: redis-benchmark --tls against redis-server with TLS\n\n");
        md.Append(string.Create(Inv, $"Reproduce: `dotnet run -c Release --project tests/Diagnostics.Benchmarks -- --suites tls --rounds {options.Rounds} --requests {options.Requests} --pipelined-requests {options.PipelinedRequests}`. "));
        md.Append(string.Create(Inv, $"Both servers with `--tls-port --tls-cert-file --tls-key-file --tls-ca-cert-file` (RSA 2048 certificates, client certificates required, TLS 1.3 negotiated) beside their plain port; load `redis-benchmark [--tls --cacert --cert --key] -t set,get -d {BenchmarkOptions.DataSize} -r {BenchmarkOptions.KeySpace} -c {BenchmarkOptions.Clients} -n <requests> -P <pipeline>`, "));
        md.Append(string.Create(Inv, $"{options.Rounds} round(s) after a warm-up of a fifth of each load, the four targets rotating; medians. CPU µs/req: the server's user + system time over the run per request.\n\n"));
        md.Append("| Test | Pipeline | Ours TLS rps | Redis TLS rps | **Ours/Redis (TLS)** | Ours p99 ms | Redis p99 ms | Ours CPU µs/req | Redis CPU µs/req | Ours plain rps | Ours TLS/plain | Redis plain rps | Redis TLS/plain |\n");
        md.Append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        foreach (var (pipeline, _) in loads)
        {
            foreach (string test in Tests)
            {
                double oursRps = Rps("ours TLS", test, pipeline), redisRps = Rps("redis TLS", test, pipeline);
                double oursPlain = Rps("ours plain", test, pipeline), redisPlain = Rps("redis plain", test, pipeline);
                md.Append(string.Create(Inv, $"| {test.ToUpperInvariant()} | {pipeline} | {oursRps:N0} | {redisRps:N0} | **{oursRps / redisRps:0.00}** | {P99("ours TLS", test, pipeline):0.000} | {P99("redis TLS", test, pipeline):0.000} | "));
                md.Append(string.Create(Inv, $"{Cpu("ours TLS", test, pipeline):0.00} | {Cpu("redis TLS", test, pipeline):0.00} | {oursPlain:N0} | {oursRps / oursPlain:0.00} | {redisPlain:N0} | {redisRps / redisPlain:0.00} |\n"));
            }
        }
        if (tlsInfo is not null)
            md.Append(string.Create(Inv, $"\nOur server's INFO tls after the runs: {tlsInfo.GetValueOrDefault("tls_handshakes")} handshakes, {tlsInfo.GetValueOrDefault("tls_handshake_usec_per_call")} µs each on average (first byte to done), {tlsInfo.GetValueOrDefault("tls_handshake_failures")} failed.\n"));
        return md.ToString();
    }

    private List<(BenchmarkSample Sample, double CpuMicros)> Measure(Target target, int pipeline, long requests)
    {
        TimeSpan before = target.Server.CpuTime();
        var samples = RedisBenchmark.RunTests(redisBenchmark, target.Port, Tests, pipeline, requests, target.Tls);
        double cpuPerRequest = (target.Server.CpuTime() - before).TotalMicroseconds / (requests * Tests.Length);
        target.Server.EnsureRunning();
        // One process for both tests: the CPU time is split evenly, close enough for SET and GET of one size.
        return samples.Select(s => (s, cpuPerRequest)).ToList();
    }

    /// <summary>The suite's certificate files, written once per run.</summary>
    private sealed class Certificates
    {
        public required string[] ClientArguments { get; init; }
        public required string[] ServerSettings { get; init; }

        public static Certificates Write(string directory)
        {
            using var caKey = RSA.Create(2048);
            var caRequest = new CertificateRequest("CN=Benchmark CA", caKey, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
            caRequest.CertificateExtensions.Add(new X509BasicConstraintsExtension(true, false, 0, true));
            using var ca = caRequest.CreateSelfSigned(DateTimeOffset.UtcNow.AddDays(-2), DateTimeOffset.UtcNow.AddDays(30));
            string caFile = Path.Combine(directory, "ca.crt");
            File.WriteAllText(caFile, ca.ExportCertificatePem());
            var (serverCert, serverKey) = Issue(directory, "server", ca, server: true);
            var (clientCert, clientKey) = Issue(directory, "client", ca, server: false);
            return new Certificates
            {
                ServerSettings = ["--tls-cert-file", serverCert, "--tls-key-file", serverKey, "--tls-ca-cert-file", caFile],
                ClientArguments = ["--tls", "--cacert", caFile, "--cert", clientCert, "--key", clientKey],
            };
        }

        private static (string Cert, string Key) Issue(string directory, string name, X509Certificate2 ca, bool server)
        {
            using var key = RSA.Create(2048);
            var request = new CertificateRequest($"CN={name}", key, HashAlgorithmName.SHA256, RSASignaturePadding.Pkcs1);
            if (server)
            {
                var names = new SubjectAlternativeNameBuilder();
                names.AddDnsName("localhost");
                names.AddIpAddress(IPAddress.Loopback);
                request.CertificateExtensions.Add(names.Build());
            }
            using var issued = request.Create(ca, DateTimeOffset.UtcNow.AddDays(-1), DateTimeOffset.UtcNow.AddDays(20), RandomNumberGenerator.GetBytes(12));
            string cert = Path.Combine(directory, name + ".crt"), keyFile = Path.Combine(directory, name + ".key");
            File.WriteAllText(cert, issued.ExportCertificatePem());
            File.WriteAllText(keyFile, key.ExportPkcs8PrivateKeyPem());
            return (cert, keyFile);
        }
    }
}
