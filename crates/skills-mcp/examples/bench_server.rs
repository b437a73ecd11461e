//! One of two MCP servers over Streamable HTTP on the same folder of skills,
//! for `scripts/mcp-http-bench.sh` to measure side by side:
//!
//! * `ours`: what `skills mcp --http` serves: `SkillsServer` on the
//!   filesystem provider (default options, as the CLI has them) behind
//!   [`HttpServer`];
//! * `rmcp`: the reference, rmcp's folder catalog (`SkillCatalog`) in the
//!   handler its documentation shows, behind rmcp's `StreamableHttpService`
//!   with its default session manager, on hyper's HTTP/1 server with
//!   `TCP_NODELAY`, so only the MCP layers differ.
//!
//! ```text
//! cargo run --release -p skills-mcp --example bench_server -- ours|rmcp SKILLS_DIR
//! ```
//!
//! Both bind a free loopback port, print `http://127.0.0.1:PORT/mcp` on
//! standard output and serve until standard input closes; both run on a
//! tokio runtime with two workers, as `skills mcp` does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::convert::Infallible;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use rmcp::handler::server::skill_catalog::SkillCatalog;
use rmcp::model::{
    GetSkillRequestParams, GetSkillResult, ListResourcesResult, ListSkillsResult,
    PaginatedRequestParams, ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use skills_fs::{FsOptions, FsProvider};
use skills_mcp::{HttpOptions, HttpServer, SkillsServer};
use tokio::io::AsyncReadExt as _;
use tokio::net::TcpListener;

/// rmcp's folder catalog, served as its module documentation shows.
#[derive(Clone)]
struct Catalog {
    skills: Arc<SkillCatalog>,
}

impl ServerHandler for Catalog {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_resources()
                .enable_skills_with_directory_read()
                .build(),
        )
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        Ok(self.skills.list_skills())
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        self.skills.get_skill(&request.uri)
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        self.skills.read_resource_directory(&request.uri)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(self.skills.resources()))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.skills
            .read_resource(&request.uri)
            .map(Into::into)
            .ok_or_else(|| ErrorData::resource_not_found(request.uri, None))
    }
}

async fn serve_rmcp(dir: PathBuf) -> std::net::SocketAddr {
    let catalog = Catalog {
        skills: Arc::new(SkillCatalog::from_dir(dir).expect("the folder loads")),
    };
    let service = StreamableHttpService::new(
        move || Ok(catalog.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            stream.set_nodelay(true).unwrap();
            let service = service.clone();
            tokio::spawn(async move {
                let handler =
                    hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
                        let service = service.clone();
                        async move { Ok::<_, Infallible>(service.handle(request).await) }
                    });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), handler)
                    .await;
            });
        }
    });
    addr
}

async fn serve_ours(dir: PathBuf) -> (HttpServer, std::net::SocketAddr) {
    let provider = FsProvider::new(vec![dir], FsOptions::default());
    let server = SkillsServer::builder(Arc::new(provider))
        .build()
        .await
        .expect("the server builds");
    let http = HttpServer::bind(server, HttpOptions::new("127.0.0.1:0".parse().unwrap()))
        .await
        .expect("the server binds");
    let addr = http.local_addr();
    (http, addr)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(which), Some(dir)) = (args.next(), args.next()) else {
        eprintln!("usage: bench_server ours|rmcp SKILLS_DIR");
        std::process::exit(2);
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let dir = PathBuf::from(dir);
        let (server, addr) = match which.as_str() {
            "ours" => {
                let (http, addr) = serve_ours(dir).await;
                (Some(http), addr)
            }
            "rmcp" => (None, serve_rmcp(dir).await),
            other => {
                eprintln!("unknown server `{other}`: ours or rmcp");
                std::process::exit(2);
            }
        };
        println!("http://{addr}/mcp");
        std::io::stdout().flush().unwrap();
        // Serve until standard input closes.
        let mut sink = Vec::new();
        let _ = tokio::io::stdin().read_to_end(&mut sink).await;
        if let Some(http) = server {
            http.shutdown().await;
        }
    });
    runtime.shutdown_background();
}
