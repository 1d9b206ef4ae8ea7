"""InfiniBand's control-plane view of a plan: the subnet OpenSM manages (`Subnet`, `build_fabric`), what its
opensm.conf must say and what its SA must answer (`expected_conf`, `expected_path_sls`), and the layout of its
files (names, `View` of a sub-fabric, one `SmInstance` per subnet). The files' text is `ffplan.opensm.files`
(jinja2 and numpy, loaded by those who print or boot them: render, verify, reroute).
"""

from ffplan.opensm.conf import expected_conf, expected_path_sls
from ffplan.opensm.layout import DEFAULT_PREFIX, PATH_KEYS, SmInstance, View, subnet_folders
from ffplan.opensm.subnet import Ca, Subnet, SubnetPort, build_fabric, ibsim_ca_guid, link_rate

__all__ = [
    "Ca",
    "DEFAULT_PREFIX",
    "PATH_KEYS",
    "SmInstance",
    "Subnet",
    "SubnetPort",
    "View",
    "build_fabric",
    "expected_conf",
    "expected_path_sls",
    "ibsim_ca_guid",
    "link_rate",
    "subnet_folders",
]
